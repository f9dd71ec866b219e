#ifndef CAST_CALSA_SHIM_H
#define CAST_CALSA_SHIM_H
#include <alsa/asoundlib.h>

/// A channel map's position `i` (Swift cannot index the flexible array `pos`).
static inline unsigned int cast_chmap_position(const snd_pcm_chmap_t *map, unsigned int i) { return map->pos[i]; }
#endif
