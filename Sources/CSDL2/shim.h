#ifndef CAST_CSDL2_SHIM_H
#define CAST_CSDL2_SHIM_H
#include <SDL2/SDL.h>
// SDL2_ttf (libsdl2-ttf-dev), the idle screen's text. In this module rather than a module of its own: its header
// includes SDL.h, and SDL's types must come from one Clang module only.
#include <SDL2/SDL_ttf.h>

/// SDL_WINDOWPOS_CENTERED is a function-like macro underneath: Swift cannot use it.
static inline int cast_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }

/// Pushes a user event of `type` (registered with SDL_RegisterEvents) to wake a thread blocked in SDL_WaitEvent.
/// Thread-safe, as SDL_PushEvent is. Returns 1 on success, 0 when filtered, negative on error.
static inline int cast_sdl_push_user_event(Uint32 type) {
    SDL_Event event;
    SDL_zero(event);
    event.type = type;
    return SDL_PushEvent(&event);
}

/// Pushes a window close request for `window`, as a window manager's close button produces it (for tests).
static inline int cast_sdl_push_window_close(SDL_Window *window) {
    SDL_Event event;
    SDL_zero(event);
    event.type = SDL_WINDOWEVENT;
    event.window.event = SDL_WINDOWEVENT_CLOSE;
    event.window.windowID = SDL_GetWindowID(window);
    return SDL_PushEvent(&event);
}
#endif
