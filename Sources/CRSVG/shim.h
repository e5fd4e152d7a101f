// The few functions of librsvg 2.54, cairo and GLib that SVGDecoder calls, declared here rather
// than through rsvg.h: its pkg-config flags (-pthread, glib's include folders) are not flags
// SwiftPM passes cleanly. Types are the C ABI's: gboolean is int, gsize size_t, gdouble double.
#include <stddef.h>
#include <stdint.h>

typedef struct _ImagoGError { uint32_t domain; int code; char *message; } ImagoGError;
typedef struct _ImagoRsvgRectangle { double x; double y; double width; double height; } ImagoRsvgRectangle;

void *rsvg_handle_new_from_data(const uint8_t *data, size_t data_len, ImagoGError **error);
int rsvg_handle_get_intrinsic_size_in_pixels(void *handle, double *out_width, double *out_height);
void rsvg_handle_set_dpi(void *handle, double dpi);
int rsvg_handle_render_document(void *handle, void *cr, const ImagoRsvgRectangle *viewport, ImagoGError **error);

// CAIRO_FORMAT_ARGB32 is 0: premultiplied, native-endian 32-bit words.
void *cairo_image_surface_create_for_data(unsigned char *data, int format, int width, int height, int stride);
void *cairo_create(void *surface);
int cairo_status(void *cr);
void cairo_destroy(void *cr);
void cairo_surface_flush(void *surface);
void cairo_surface_destroy(void *surface);

void g_object_unref(void *object);
void g_error_free(ImagoGError *error);

typedef struct _ImagoRsvgLength { double length; int unit; } ImagoRsvgLength;
void rsvg_handle_get_intrinsic_dimensions(void *handle, int *out_has_width, ImagoRsvgLength *out_width, int *out_has_height,
                                          ImagoRsvgLength *out_height, int *out_has_viewbox, ImagoRsvgRectangle *out_viewbox);
