#ifndef CAST_CALSA_SHIM_H
#define CAST_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
