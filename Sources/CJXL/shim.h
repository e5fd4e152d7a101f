#include <jxl/decode.h>
#include <jxl/encode.h>
