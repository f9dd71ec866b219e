// mirror-flash: when a change of the sender's screen appears on the receiver's (MirrorAudioTests' lip sync, both ends
// on this machine). Covers PAINT_DISPLAY with a black window, and at CLOCK_MONOTONIC millisecond AT paints it white;
// reads the centre of READ_DISPLAY's screen every millisecond (XGetImage of one pixel) and prints `seen MS`, the
// monotonic time it first turned white, then exits; `timeout` after 20 s past AT.
// usage: mirror-flash PAINT_DISPLAY READ_DISPLAY AT
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: mirror-flash PAINT_DISPLAY READ_DISPLAY AT\n"); return 2; }
    double at = atof(argv[3]);
    Display *p = XOpenDisplay(argv[1]), *r = XOpenDisplay(argv[2]);
    if (!p || !r) { fprintf(stderr, "cannot open the displays\n"); return 1; }
    int s = DefaultScreen(p);
    XSetWindowAttributes a = {.override_redirect = True, .background_pixel = BlackPixel(p, s)};
    Window w = XCreateWindow(p, RootWindow(p, s), 0, 0, DisplayWidth(p, s), DisplayHeight(p, s), 0, CopyFromParent,
                             InputOutput, CopyFromParent, CWOverrideRedirect | CWBackPixel, &a);
    XMapRaised(p, w);
    GC white = XCreateGC(p, w, 0, NULL);
    XSetForeground(p, white, WhitePixel(p, s));
    XSync(p, False);
    int rs = DefaultScreen(r);
    int x = DisplayWidth(r, rs) / 2, y = DisplayHeight(r, rs) / 2;
    int painted = 0;
    while (now_ms() < at + 20000) {
        if (!painted && now_ms() >= at) {
            XFillRectangle(p, w, white, 0, 0, DisplayWidth(p, s), DisplayHeight(p, s));
            XSync(p, False);
            painted = 1;
            printf("painted %.3f\n", now_ms());
            fflush(stdout);
        }
        XImage *image = XGetImage(r, RootWindow(r, rs), x, y, 1, 1, AllPlanes, ZPixmap);
        double seen = now_ms();
        unsigned long pixel = image ? XGetPixel(image, 0, 0) : 0;
        if (image) XDestroyImage(image);
        if (painted && now_ms() > at + 19000) { printf("pixel %lx\n", pixel); fflush(stdout); }
        if (painted && ((pixel >> 8) & 0xff) > 200 && (pixel & 0xff) > 200) {
            printf("seen %.3f\n", seen);
            return 0;
        }
        usleep(1000);
    }
    printf("timeout\n");
    return 1;
}
