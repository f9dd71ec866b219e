#ifndef CAST_CSDL2_SHIM_H
#define CAST_CSDL2_SHIM_H
#include <SDL2/SDL.h>
#endif
