#ifndef CAST_CX11_SHIM_H
#define CAST_CX11_SHIM_H
// Screen capture for `cast mirror` (cast-mirror): Xlib, MIT-SHM (XShmGetImage), XDamage (what changed), XFixes.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xdamage.h>
#include <X11/extensions/Xfixes.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <signal.h>
#include <unistd.h>

/// Macros Swift cannot call.
static inline Window cast_x11_default_root(Display *display) { return DefaultRootWindow(display); }
static inline unsigned long cast_x11_all_planes(void) { return AllPlanes; }
static inline int cast_x11_event_type(const XEvent *event) { return event->type; }
static inline Visual *cast_x11_default_visual(Display *display) {
    return DefaultVisual(display, DefaultScreen(display));
}
static inline int cast_x11_default_depth(Display *display) { return DefaultDepth(display, DefaultScreen(display)); }
/// An XImage's pixel bytes, its stride and bits per pixel (the struct's function table is not Swift's business).
static inline char *cast_x11_image_data(XImage *image) { return image->data; }
static inline int cast_x11_image_stride(XImage *image) { return image->bytes_per_line; }
static inline int cast_x11_image_bpp(XImage *image) { return image->bits_per_pixel; }
static inline void cast_x11_destroy_image(XImage *image) { XDestroyImage(image); }
/// The window an event is about (XEvent is a union), for the structure events of the window mirrored.
static inline Window cast_x11_event_window(const XEvent *event) { return event->xany.window; }

/// X errors are counted, not fatal: Xlib's default handler ends the process, and a mirrored window can be destroyed
/// between two requests that name it (the request fails, `cast_x11_error_count` says so, the capture ends with a word).
static int cast_x11_errors = 0;
static inline int cast_x11_count_error(Display *display, XErrorEvent *error) {
    (void)display;
    (void)error;
    cast_x11_errors++;
    return 0;
}
/// The X server went away (it ended, the connection broke): Xlib's default handler prints its own words and exits
/// 1; this one says it in the helper's protocol (an `error:` line on standard error), so that `cast` reports it.
static inline int cast_x11_connection_lost(Display *display) {
    (void)display;
    static const char line[] = "error: the X11 display closed the connection (did the X server end?)\n";
    (void)!write(2, line, sizeof line - 1);
    _exit(1);
}
static inline void cast_x11_count_errors(void) {
    XSetErrorHandler(cast_x11_count_error);
    XSetIOErrorHandler(cast_x11_connection_lost);
}
static inline int cast_x11_error_count(void) { return cast_x11_errors; }

/// The helper dies with the process that started it (prctl is variadic: Swift cannot call it), and keeps no
/// descriptor but its standard ones: one inherited by mistake would keep its starter's pipes open after both ended.
static inline int cast_mirror_helper_detach(void) {
    for (int fd = 3; fd < 4096; fd++) close(fd);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    return getppid() == 1 ? -1 : 0;
}
#endif
