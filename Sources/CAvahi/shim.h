#ifndef CAST_CAVAHI_SHIM_H
#define CAST_CAVAHI_SHIM_H
// avahi-client is opened with dlopen on first use instead of being linked: loading it pulls in libdbus, libsystemd,
// libgcrypt and five more (about 2.1 M instructions of dynamic-loader work and 10 mappings), which a `cast` that
// never browses (`cast --help`, `cast status HOST:PORT`) should not pay for. The headers still give the types,
// enums and prototypes (libavahi-client-dev, installed by scripts/setup); nothing links the libraries.
//
// Swift calls `cast_avahi_<name>`, never `avahi_<name>` (which would be an undefined symbol at link time). Each
// wrapper has its function's exact type (checked at compile time) and calls through a pointer found with dlsym.
// Call `cast_avahi_load` before anything else: a wrapper called when the library cannot be opened aborts.
//
// Thread-safety: every cached handle and pointer is read and written with __atomic acquire/release. Two threads
// that find one empty at the same time both look it up and store the same value (dlopen of an open library only
// counts a reference; it is never closed), so the race is benign and no lock is needed. The caches are per copy:
// a static inline function is emitted into each object file that calls it (each Swift file, in a debug build), and
// a copy's first call finds the library already open, so this costs one lookup per copy, never a second load.
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-client/lookup.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/alternative.h>
#include <avahi-common/strlst.h>
#include <avahi-common/address.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/// The library opened on first use; libavahi-common comes with it as its dependency, and dlsym on its handle
/// searches that too.
#define CAST_AVAHI_SONAME "libavahi-client.so.3"

/// Opens `soname` for the rest of the process (it is never closed, like a linked library): its handle, or NULL with
/// dlerror's text in `error` (of `size` bytes).
static inline void *cast_avahi_open(const char *soname, char *error, size_t size) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, size, "%s", reason != NULL ? reason : "dlopen failed");
    }
    return handle;
}

/// Whether the library `soname` is there (opening it); when not, `error` gets dlerror's text. `cast_avahi_load`
/// with the name as a parameter, so that a test can ask for a library that does not exist.
static inline bool cast_avahi_load_named(const char *soname, char *error, size_t size) {
    return cast_avahi_open(soname, error, size) != NULL;
}

/// The handle of CAST_AVAHI_SONAME, opened on the first call; NULL (with dlerror's text in `error`) when the
/// library cannot be opened.
static inline void *cast_avahi_handle(char *error, size_t size) {
    static void *cached;
    void *handle = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (handle == NULL) {
        handle = cast_avahi_open(CAST_AVAHI_SONAME, error, size);
        if (handle != NULL) __atomic_store_n(&cached, handle, __ATOMIC_RELEASE);
    }
    return handle;
}

/// Opens avahi-client if it is not open yet. Returns whether it is there; when not, `error` gets dlerror's text.
static inline bool cast_avahi_load(char *error, size_t size) { return cast_avahi_handle(error, size) != NULL; }

/// The address of avahi's function `name`. Aborts when the library or the function is missing: the callers load
/// the library first (`cast_avahi_load`), and every function we use is in every avahi-client 0.6 or later.
static inline void *cast_avahi_symbol(const char *name) {
    char error[512];
    void *handle = cast_avahi_handle(error, sizeof error);
    if (handle == NULL) {
        fprintf(stderr, "avahi-client is not loaded (%s) but %s was called\n", error, name);
        abort();
    }
    void *symbol = dlsym(handle, name);
    if (symbol == NULL) {
        fprintf(stderr, "%s is missing from %s\n", name, CAST_AVAHI_SONAME);
        abort();
    }
    return symbol;
}

/// In the body of `cast_<name>`: checks that the wrapper has `name`'s type and sets `function` to `name`'s address,
/// found once and cached.
#define CAST_AVAHI_FUNCTION(name)                                                                              \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&cast_##name), __typeof__(&name)),                  \
                   "cast_" #name " must have the type of " #name);                                             \
    static __typeof__(&name) cached;                                                                           \
    __typeof__(&name) function = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);                                   \
    if (function == NULL) {                                                                                    \
        function = (__typeof__(&name))cast_avahi_symbol(#name);                                                \
        __atomic_store_n(&cached, function, __ATOMIC_RELEASE);                                                 \
    }

// MARK: avahi-common

static inline char *cast_avahi_address_snprint(char *ret_s, size_t length, const AvahiAddress *a) {
    CAST_AVAHI_FUNCTION(avahi_address_snprint)
    return function(ret_s, length, a);
}

static inline char *cast_avahi_alternative_service_name(const char *s) {
    CAST_AVAHI_FUNCTION(avahi_alternative_service_name)
    return function(s);
}

static inline void cast_avahi_free(void *p) {
    CAST_AVAHI_FUNCTION(avahi_free)
    function(p);
}

static inline const char *cast_avahi_strerror(int error) {
    CAST_AVAHI_FUNCTION(avahi_strerror)
    return function(error);
}

static inline AvahiStringList *cast_avahi_string_list_add_pair_arbitrary(
    AvahiStringList *l, const char *key, const uint8_t *value, size_t size) {
    CAST_AVAHI_FUNCTION(avahi_string_list_add_pair_arbitrary)
    return function(l, key, value, size);
}

static inline void cast_avahi_string_list_free(AvahiStringList *l) {
    CAST_AVAHI_FUNCTION(avahi_string_list_free)
    function(l);
}

static inline AvahiStringList *cast_avahi_string_list_get_next(AvahiStringList *l) {
    CAST_AVAHI_FUNCTION(avahi_string_list_get_next)
    return function(l);
}

static inline int cast_avahi_string_list_get_pair(AvahiStringList *l, char **key, char **value, size_t *size) {
    CAST_AVAHI_FUNCTION(avahi_string_list_get_pair)
    return function(l, key, value, size);
}

static inline AvahiSimplePoll *cast_avahi_simple_poll_new(void) {
    CAST_AVAHI_FUNCTION(avahi_simple_poll_new)
    return function();
}

static inline void cast_avahi_simple_poll_free(AvahiSimplePoll *s) {
    CAST_AVAHI_FUNCTION(avahi_simple_poll_free)
    function(s);
}

static inline const AvahiPoll *cast_avahi_simple_poll_get(AvahiSimplePoll *s) {
    CAST_AVAHI_FUNCTION(avahi_simple_poll_get)
    return function(s);
}

static inline int cast_avahi_simple_poll_iterate(AvahiSimplePoll *s, int sleep_time) {
    CAST_AVAHI_FUNCTION(avahi_simple_poll_iterate)
    return function(s, sleep_time);
}

static inline void cast_avahi_simple_poll_wakeup(AvahiSimplePoll *s) {
    CAST_AVAHI_FUNCTION(avahi_simple_poll_wakeup)
    function(s);
}

static inline AvahiThreadedPoll *cast_avahi_threaded_poll_new(void) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_new)
    return function();
}

static inline void cast_avahi_threaded_poll_free(AvahiThreadedPoll *p) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_free)
    function(p);
}

static inline const AvahiPoll *cast_avahi_threaded_poll_get(AvahiThreadedPoll *p) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_get)
    return function(p);
}

static inline int cast_avahi_threaded_poll_start(AvahiThreadedPoll *p) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_start)
    return function(p);
}

static inline int cast_avahi_threaded_poll_stop(AvahiThreadedPoll *p) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_stop)
    return function(p);
}

static inline void cast_avahi_threaded_poll_lock(AvahiThreadedPoll *p) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_lock)
    function(p);
}

static inline void cast_avahi_threaded_poll_unlock(AvahiThreadedPoll *p) {
    CAST_AVAHI_FUNCTION(avahi_threaded_poll_unlock)
    function(p);
}

// MARK: avahi-client

static inline AvahiClient *cast_avahi_client_new(
    const AvahiPoll *poll_api, AvahiClientFlags flags, AvahiClientCallback callback, void *userdata, int *error) {
    CAST_AVAHI_FUNCTION(avahi_client_new)
    return function(poll_api, flags, callback, userdata, error);
}

static inline void cast_avahi_client_free(AvahiClient *client) {
    CAST_AVAHI_FUNCTION(avahi_client_free)
    function(client);
}

static inline int cast_avahi_client_errno(AvahiClient *client) {
    CAST_AVAHI_FUNCTION(avahi_client_errno)
    return function(client);
}

static inline AvahiClientState cast_avahi_client_get_state(AvahiClient *client) {
    CAST_AVAHI_FUNCTION(avahi_client_get_state)
    return function(client);
}

static inline AvahiServiceBrowser *cast_avahi_service_browser_new(
    AvahiClient *client, AvahiIfIndex interface, AvahiProtocol protocol, const char *type, const char *domain,
    AvahiLookupFlags flags, AvahiServiceBrowserCallback callback, void *userdata) {
    CAST_AVAHI_FUNCTION(avahi_service_browser_new)
    return function(client, interface, protocol, type, domain, flags, callback, userdata);
}

static inline AvahiServiceResolver *cast_avahi_service_resolver_new(
    AvahiClient *client, AvahiIfIndex interface, AvahiProtocol protocol, const char *name, const char *type,
    const char *domain, AvahiProtocol aprotocol, AvahiLookupFlags flags, AvahiServiceResolverCallback callback,
    void *userdata) {
    CAST_AVAHI_FUNCTION(avahi_service_resolver_new)
    return function(client, interface, protocol, name, type, domain, aprotocol, flags, callback, userdata);
}

static inline int cast_avahi_service_resolver_free(AvahiServiceResolver *r) {
    CAST_AVAHI_FUNCTION(avahi_service_resolver_free)
    return function(r);
}

static inline AvahiEntryGroup *cast_avahi_entry_group_new(
    AvahiClient *c, AvahiEntryGroupCallback callback, void *userdata) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_new)
    return function(c, callback, userdata);
}

static inline AvahiClient *cast_avahi_entry_group_get_client(AvahiEntryGroup *group) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_get_client)
    return function(group);
}

static inline int cast_avahi_entry_group_add_service_strlst(
    AvahiEntryGroup *group, AvahiIfIndex interface, AvahiProtocol protocol, AvahiPublishFlags flags, const char *name,
    const char *type, const char *domain, const char *host, uint16_t port, AvahiStringList *txt) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_add_service_strlst)
    return function(group, interface, protocol, flags, name, type, domain, host, port, txt);
}

static inline int cast_avahi_entry_group_update_service_txt_strlst(
    AvahiEntryGroup *g, AvahiIfIndex interface, AvahiProtocol protocol, AvahiPublishFlags flags, const char *name,
    const char *type, const char *domain, AvahiStringList *strlst) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_update_service_txt_strlst)
    return function(g, interface, protocol, flags, name, type, domain, strlst);
}

static inline int cast_avahi_entry_group_commit(AvahiEntryGroup *group) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_commit)
    return function(group);
}

static inline int cast_avahi_entry_group_reset(AvahiEntryGroup *group) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_reset)
    return function(group);
}

static inline int cast_avahi_entry_group_is_empty(AvahiEntryGroup *group) {
    CAST_AVAHI_FUNCTION(avahi_entry_group_is_empty)
    return function(group);
}

#endif
