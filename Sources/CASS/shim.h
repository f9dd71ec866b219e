#ifndef CAST_CASS_SHIM_H
#define CAST_CASS_SHIM_H
// libass: renders ASS/SSA subtitle events (and every text subtitle FFmpeg's decoders turn into ASS) to alpha masks.
#include <ass/ass.h>
#include <stdarg.h>
#include <stdio.h>

/// libass's messages come through a variadic (va_list) callback, which Swift cannot write: errors and warnings
/// (levels 0-2) go to standard error as one line each, the chatter below them (font selection, every event) nowhere.
static void cast_ass_message(int level, const char *format, va_list args, void *data) {
    (void)data;
    if (level > 2) return;
    fputs("libass: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
}

static inline void cast_ass_route_messages(ASS_Library *library) {
    ass_set_message_cb(library, cast_ass_message, NULL);
}
#endif
