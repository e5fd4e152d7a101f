// Little CMS 2 (Debian liblcms2-dev): colour profiles and transforms.
#include <lcms2.h>
