#ifndef CLCMSSUPPORT_H
#define CLCMSSUPPORT_H

#include <stddef.h>
#include <lcms2.h>

/// A Little CMS context of its own for one profile's transform: every allocation Little CMS makes
/// in it is counted, and one that would take the total past `limit` bytes fails (Little CMS then
/// refuses the profile), so a hostile profile cannot make it allocate without bound. Its errors
/// are not printed. NULL when the context cannot be made.
cmsContext imago_lcms_context_create(size_t limit);

/// Deletes a context made by imago_lcms_context_create, after every profile and transform in it.
void imago_lcms_context_delete(cmsContext context);

/// The most bytes the context has held at once.
size_t imago_lcms_context_peak(cmsContext context);

#endif
