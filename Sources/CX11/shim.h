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
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// Macros Swift cannot call.
static inline Window cast_x11_default_root(Display *display) { return DefaultRootWindow(display); }
static inline unsigned long cast_x11_all_planes(void) { return AllPlanes; }
static inline int cast_x11_event_type(const XEvent *event) { return event->type; }
static inline Visual *cast_x11_default_visual(Display *display) {
    return DefaultVisual(display, DefaultScreen(display));
}
static inline int cast_x11_default_depth(Display *display) { return DefaultDepth(display, DefaultScreen(display)); }
/// The bits of a pixel of the default depth in an image (ZPixmap): 32 for 24-bit colour as captured; 0 if unknown.
static inline int cast_x11_default_bits_per_pixel(Display *display) {
    int count = 0;
    int bits = 0;
    XPixmapFormatValues *formats = XListPixmapFormats(display, &count);
    for (int index = 0; formats != NULL && index < count; index++) {
        if (formats[index].depth == cast_x11_default_depth(display)) bits = formats[index].bits_per_pixel;
    }
    if (formats != NULL) XFree(formats);
    return bits;
}
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

/// Whether an X server listens on the local display `name` (":N", ":N.S" or "unix:N"), for when XOpenDisplay failed:
/// 1 when its socket (/tmp/.X11-unix/XN, or the abstract one of that name) takes a connection, so that the server
/// refused this client (no cookie, a wrong one, or not let in by `xhost`); 0 when nothing listens; -1 for a name
/// that is not a local display (a host's: nothing to tell).
static inline int cast_x11_server_listens(const char *name) {
    const char *colon = strrchr(name, ':');
    if (colon == NULL || !(colon == name || strncmp(name, "unix:", 5) == 0)) return -1;
    char *end = NULL;
    long number = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || number < 0 || number > 65535 || (*end != 0 && *end != '.')) return -1;
    for (int abstract = 0; abstract < 2; abstract++) {
        struct sockaddr_un address;
        memset(&address, 0, sizeof address);
        address.sun_family = AF_UNIX;
        snprintf(address.sun_path + abstract, sizeof address.sun_path - 1, "/tmp/.X11-unix/X%ld", number);
        socklen_t length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract
                                       + strlen(address.sun_path + abstract));
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return 0;
        int connected = connect(fd, (struct sockaddr *)&address, length) == 0;
        close(fd);
        if (connected) return 1;
    }
    return 0;
}

/// The helper dies with the process that started it (prctl is variadic: Swift cannot call it), and keeps no
/// descriptor but its standard ones: one inherited by mistake would keep its starter's pipes open after both ended.
static inline int cast_mirror_helper_detach(void) {
    for (int fd = 3; fd < 4096; fd++) close(fd);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    return getppid() == 1 ? -1 : 0;
}
#endif
