// mirror-latency: glass-to-glass latency of a screen mirror, both ends on this machine (scripts/bench-mirror).
// Paints a code that changes every frame on one X display (the sender's screen: the monotonic time in
// milliseconds, 24 bits as black and white blocks, twice, so that a half-updated picture is not read) and reads it
// back from another (the receiver's screen, where the mirror shows it) as fast as XShmGetImage allows. Prints each
// new code's latency in milliseconds, one a line: the time it was first seen minus the time it was painted.
// usage: mirror-latency PAINT_DISPLAY READ_DISPLAY SECONDS FPS
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

enum { BITS = 24, BLOCK = 48, ROW = 60 };
static double seconds_to_run;
static int fps;
static const char *paint_name, *read_name;
static volatile int done;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *paint(void *unused) {
    (void)unused;
    Display *d = XOpenDisplay(paint_name);
    if (!d) { fprintf(stderr, "cannot open %s\n", paint_name); exit(1); }
    int s = DefaultScreen(d);
    XSetWindowAttributes a = {.override_redirect = True, .background_pixel = BlackPixel(d, s)};
    Window w = XCreateWindow(d, RootWindow(d, s), 0, 0, DisplayWidth(d, s), DisplayHeight(d, s), 0, CopyFromParent,
                             InputOutput, CopyFromParent, CWOverrideRedirect | CWBackPixel, &a);
    XMapRaised(d, w);
    GC white = XCreateGC(d, w, 0, NULL), black = XCreateGC(d, w, 0, NULL);
    XSetForeground(d, white, WhitePixel(d, s));
    XSetForeground(d, black, BlackPixel(d, s));
    XSync(d, False);
    double start = now_ms(), next = start;
    while (now_ms() - start < seconds_to_run * 1e3) {
        unsigned code = (unsigned)now_ms() & ((1u << BITS) - 1);
        for (int row = 0; row < 2; row++)
            for (int i = 0; i < BITS; i++)
                XFillRectangle(d, w, (code >> i) & 1 ? white : black, i * BLOCK, row * ROW, BLOCK, ROW);
        XSync(d, False);
        next += 1e3 / fps;
        double wait = next - now_ms();
        if (wait > 0) usleep((useconds_t)(wait * 1e3));
    }
    done = 1;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: mirror-latency PAINT_DISPLAY READ_DISPLAY SECONDS FPS\n"); return 2; }
    paint_name = argv[1];
    read_name = argv[2];
    seconds_to_run = atof(argv[3]);
    fps = atoi(argv[4]);
    Display *d = XOpenDisplay(read_name);
    if (!d || !XShmQueryExtension(d)) { fprintf(stderr, "cannot open %s with MIT-SHM\n", read_name); return 1; }
    int s = DefaultScreen(d);
    XShmSegmentInfo shm;
    XImage *image = XShmCreateImage(d, DefaultVisual(d, s), DefaultDepth(d, s), ZPixmap, NULL, &shm, BITS * BLOCK,
                                    2 * ROW);
    shm.shmid = shmget(IPC_PRIVATE, image->bytes_per_line * image->height, IPC_CREAT | 0600);
    shm.shmaddr = image->data = shmat(shm.shmid, NULL, 0);
    shm.readOnly = False;
    XShmAttach(d, &shm);
    XSync(d, False);
    shmctl(shm.shmid, IPC_RMID, NULL);
    pthread_t painter;
    pthread_create(&painter, NULL, paint, NULL);
    long last = -1;
    while (!done) {
        XShmGetImage(d, RootWindow(d, s), image, 0, 0, AllPlanes);
        double seen = now_ms();
        long codes[2];
        for (int row = 0; row < 2; row++) {
            unsigned code = 0;
            for (int i = 0; i < BITS; i++) {
                unsigned long pixel = XGetPixel(image, i * BLOCK + BLOCK / 2, row * ROW + ROW / 2);
                if (((pixel >> 8) & 0xff) > 128) code |= 1u << i;
            }
            codes[row] = code;
        }
        if (codes[0] == codes[1] && codes[0] != last) {
            if (last >= 0) {
                long latency = ((long)seen - codes[0]) & ((1L << BITS) - 1);
                if (latency < 10000) printf("%ld\n", latency);
                fflush(stdout);
            }
            last = codes[0];
        }
        usleep(1000);
    }
    pthread_join(painter, NULL);
    return 0;
}
