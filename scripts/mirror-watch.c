// mirror-watch: when the centre of two X screens turns white or black (MirrorAudioTests' lip sync, both ends on this
// machine). Reads the centre pixel of SENDER_DISPLAY's and RECEIVER_DISPLAY's screens every millisecond for SECONDS
// and prints `sender MS white|black` or `receiver MS white|black` (CLOCK_MONOTONIC milliseconds) at each change.
// usage: mirror-watch SENDER_DISPLAY RECEIVER_DISPLAY SECONDS
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

// 1 white, 0 black, -1 neither (or no image).
static int centre(Display *d) {
    int s = DefaultScreen(d);
    XImage *image = XGetImage(d, RootWindow(d, s), DisplayWidth(d, s) / 2, DisplayHeight(d, s) / 2, 1, 1, AllPlanes,
                              ZPixmap);
    if (!image) return -1;
    unsigned long pixel = XGetPixel(image, 0, 0);
    XDestroyImage(image);
    int g = (pixel >> 8) & 0xff;
    return g > 200 ? 1 : g < 55 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: mirror-watch SENDER_DISPLAY RECEIVER_DISPLAY SECONDS\n"); return 2; }
    Display *displays[2] = {XOpenDisplay(argv[1]), XOpenDisplay(argv[2])};
    const char *names[2] = {"sender", "receiver"};
    if (!displays[0] || !displays[1]) { fprintf(stderr, "cannot open the displays\n"); return 1; }
    int last[2] = {-1, -1};
    double end = now_ms() + atof(argv[3]) * 1e3;
    while (now_ms() < end) {
        for (int i = 0; i < 2; i++) {
            int value = centre(displays[i]);
            if (value >= 0 && value != last[i]) {
                printf("%s %.3f %s\n", names[i], now_ms(), value ? "white" : "black");
                fflush(stdout);
                last[i] = value;
            }
        }
        usleep(1000);
    }
    return 0;
}
