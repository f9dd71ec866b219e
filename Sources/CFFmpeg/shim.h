#ifndef CAST_CFFMPEG_SHIM_H
#define CAST_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libavutil/time.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

/// AVERROR(e) is a function-like macro: Swift cannot call it.
static inline int cast_averror(int e) { return AVERROR(e); }
static inline int cast_averror_eof(void) { return AVERROR_EOF; }
static inline int64_t cast_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational cast_av_time_base_q(void) { return AV_TIME_BASE_Q; }
#endif
