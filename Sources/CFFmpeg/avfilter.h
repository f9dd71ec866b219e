#ifndef CAST_CFFMPEG_AVFILTER_H
#define CAST_CFFMPEG_AVFILTER_H
// libavfilter is opened with dlopen the first time a picture or a sound needs a filter (a phone video turned upright,
// HDR tone-mapped, a tempo other than 1) instead of being linked. Linked, it and what it pulls in (three flite voices,
// libplacebo, librubberband, libvulkan, lapack and 20 more) cost every process that maps them about 3.4 MB of
// relocated data (private pages, /proc/PID/smaps) before a single filter runs: castd and each of its decoder workers
// paid it for every film, and most films never need a filter (docs/performance.md). The headers still give the types
// and prototypes (libavfilter-dev); nothing links the library.
//
// Swift calls `cast_<name>` for the libavfilter functions below, never `<name>` (which would be an undefined symbol at
// link time). Each wrapper has its function's exact type (checked at compile time) and calls through a pointer found
// with dlsym. Call `cast_avfilter_load` before making a graph: it says why the library cannot be opened. A wrapper
// called when it cannot returns what the function returns for a failure (NULL, AVERROR(ENOSYS)) or does nothing.
//
// Thread-safety: every cached handle and pointer is read and written with __atomic acquire/release. Two threads that
// find one empty at the same time both look it up and store the same value (dlopen of an open library only counts a
// reference; it is never closed), so the race is benign and no lock is needed.
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/error.h>
#include <libavutil/macros.h>

/// The libavfilter these headers are from (its ABI: the major version).
#define CAST_AVFILTER_SONAME "libavfilter.so." AV_STRINGIFY(LIBAVFILTER_VERSION_MAJOR)

/// Opens `soname` for the rest of the process: its handle, or NULL with dlerror's text in `error` (of `size` bytes;
/// `error` may be NULL).
static inline void *cast_avfilter_open(const char *soname, char *error, size_t size) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL && error != NULL && size > 0) {
        const char *reason = dlerror();
        snprintf(error, size, "%s", reason != NULL ? reason : "dlopen failed");
    }
    return handle;
}

/// Whether the library `soname` can be opened (opening it); when not, `error` gets dlerror's text. For tests: the
/// loader with the name as a parameter.
static inline bool cast_avfilter_load_named(const char *soname, char *error, size_t size) {
    return cast_avfilter_open(soname, error, size) != NULL;
}

/// The handle of CAST_AVFILTER_SONAME, opened on the first call; NULL (with dlerror's text in `error`) when it cannot
/// be opened.
static inline void *cast_avfilter_handle(char *error, size_t size) {
    static void *cached;
    void *handle = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (handle == NULL) {
        handle = cast_avfilter_open(CAST_AVFILTER_SONAME, error, size);
        if (handle != NULL) __atomic_store_n(&cached, handle, __ATOMIC_RELEASE);
    }
    return handle;
}

/// Opens libavfilter if it is not open yet. Returns whether it is there; when not, `error` gets dlerror's text.
static inline bool cast_avfilter_load(char *error, size_t size) { return cast_avfilter_handle(error, size) != NULL; }

/// Whether this process has opened libavfilter (a test's question; nothing here opens it).
static inline bool cast_avfilter_is_loaded(void) {
    return dlopen(CAST_AVFILTER_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) != NULL;
}

/// In the body of `cast_<name>`: checks that the wrapper has `name`'s type and sets `function` to `name`'s address
/// (NULL when the library or the symbol is missing), found once and cached.
#define CAST_AVFILTER_FUNCTION(name)                                                                           \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&cast_##name), __typeof__(&name)),                  \
                   "cast_" #name " must have the type of " #name);                                             \
    static __typeof__(&name) cached;                                                                           \
    __typeof__(&name) function = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);                                   \
    if (function == NULL) {                                                                                    \
        void *handle = cast_avfilter_handle(NULL, 0);                                                          \
        function = handle != NULL ? (__typeof__(&name))dlsym(handle, #name) : NULL;                            \
        if (function != NULL) __atomic_store_n(&cached, function, __ATOMIC_RELEASE);                          \
    }

static inline AVFilterGraph *cast_avfilter_graph_alloc(void) {
    CAST_AVFILTER_FUNCTION(avfilter_graph_alloc)
    return function != NULL ? function() : NULL;
}

static inline void cast_avfilter_graph_free(AVFilterGraph **graph) {
    CAST_AVFILTER_FUNCTION(avfilter_graph_free)
    if (function != NULL) function(graph);
}

static inline int cast_avfilter_graph_config(AVFilterGraph *graphctx, void *log_ctx) {
    CAST_AVFILTER_FUNCTION(avfilter_graph_config)
    return function != NULL ? function(graphctx, log_ctx) : AVERROR(ENOSYS);
}

static inline int cast_avfilter_graph_create_filter(AVFilterContext **filt_ctx, const AVFilter *filt,
                                                    const char *name, const char *args, void *opaque,
                                                    AVFilterGraph *graph_ctx) {
    CAST_AVFILTER_FUNCTION(avfilter_graph_create_filter)
    return function != NULL ? function(filt_ctx, filt, name, args, opaque, graph_ctx) : AVERROR(ENOSYS);
}

static inline int cast_avfilter_graph_parse_ptr(AVFilterGraph *graph, const char *filters, AVFilterInOut **inputs,
                                                AVFilterInOut **outputs, void *log_ctx) {
    CAST_AVFILTER_FUNCTION(avfilter_graph_parse_ptr)
    return function != NULL ? function(graph, filters, inputs, outputs, log_ctx) : AVERROR(ENOSYS);
}

static inline const AVFilter *cast_avfilter_get_by_name(const char *name) {
    CAST_AVFILTER_FUNCTION(avfilter_get_by_name)
    return function != NULL ? function(name) : NULL;
}

static inline int cast_avfilter_link(AVFilterContext *src, unsigned srcpad, AVFilterContext *dst, unsigned dstpad) {
    CAST_AVFILTER_FUNCTION(avfilter_link)
    return function != NULL ? function(src, srcpad, dst, dstpad) : AVERROR(ENOSYS);
}

static inline void cast_avfilter_inout_free(AVFilterInOut **inout) {
    CAST_AVFILTER_FUNCTION(avfilter_inout_free)
    if (function != NULL) function(inout);
}

static inline int cast_av_buffersrc_add_frame(AVFilterContext *ctx, AVFrame *frame) {
    CAST_AVFILTER_FUNCTION(av_buffersrc_add_frame)
    return function != NULL ? function(ctx, frame) : AVERROR(ENOSYS);
}

static inline int cast_av_buffersink_get_frame(AVFilterContext *ctx, AVFrame *frame) {
    CAST_AVFILTER_FUNCTION(av_buffersink_get_frame)
    return function != NULL ? function(ctx, frame) : AVERROR(ENOSYS);
}

#endif
