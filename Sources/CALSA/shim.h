#ifndef CAST_CALSA_SHIM_H
#define CAST_CALSA_SHIM_H
#include <string.h>
#include <alsa/asoundlib.h>

/// A channel map's position `i` (Swift cannot index the flexible array `pos`).
static inline unsigned int cast_chmap_position(const snd_pcm_chmap_t *map, unsigned int i) { return map->pos[i]; }

/// Whether `needle` occurs in the `length` bytes at `text`.
static inline int cast_alsa_contains(const char *text, size_t length, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= length; i++) {
        if (memcmp(text + i, needle, n) == 0) return 1;
    }
    return 0;
}

/// 1 when the PCM's chain of plugins ends in ALSA's `null` PCM, which takes (or gives) audio at once and so does not
/// pace its user: `null` itself, or a plugin over it. `snd_pcm_dump` names each PCM of the chain on a line of its own
/// that does not begin with a space, the last one "Null PCM" (alsa-lib has no call that returns a plugin's slave).
/// Shared by castd's playback (AlsaDevice) and cast-mirror's sound capture.
static inline int cast_pcm_ends_in_null(snd_pcm_t *pcm) {
    if (snd_pcm_type(pcm) == SND_PCM_TYPE_NULL) return 1;
    snd_output_t *output = NULL;
    if (snd_output_buffer_open(&output) != 0 || output == NULL) return 0;
    int ends = 0;
    char *text = NULL;
    if (snd_pcm_dump(pcm, output) == 0 && snd_output_buffer_string(output, &text) > 0 && text != NULL) {
        const char *last = NULL;
        for (const char *line = text; *line; ) {
            const char *end = strchr(line, '\n');
            size_t length = end ? (size_t)(end - line) : strlen(line);
            if (length > 0 && line[0] != ' ' && cast_alsa_contains(line, length, " PCM")) last = line;
            if (!end) break;
            line = end + 1;
        }
        if (last) {
            const char *end = strchr(last, '\n');
            size_t length = end ? (size_t)(end - last) : strlen(last);
            ends = cast_alsa_contains(last, length, "Null PCM");
        }
    }
    snd_output_close(output);
    return ends;
}
#endif
