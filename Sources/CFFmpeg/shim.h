#ifndef CAST_CFFMPEG_SHIM_H
#define CAST_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include "avfilter.h"
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
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
static inline int cast_averror_exit(void) { return AVERROR_EXIT; }
static inline int cast_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int cast_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }

/// The size of a frame's picture packed without padding, as the rawvideo encoder packs it.
static inline int cast_frame_image_size(const AVFrame *frame) {
    return av_image_get_buffer_size((enum AVPixelFormat)frame->format, frame->width, frame->height, 1);
}

/// Packs a frame's planes into `buffer` (align 1), as the rawvideo encoder does; returns bytes written or an AVERROR.
static inline int cast_frame_copy_to_buffer(const AVFrame *frame, uint8_t *buffer, int size) {
    return av_image_copy_to_buffer(buffer, size, (const uint8_t *const *)frame->data, frame->linesize,
                                   (enum AVPixelFormat)frame->format, frame->width, frame->height, 1);
}

/// swr_convert from a decoded frame's planes into one interleaved output buffer (Swift cannot pass `const uint8_t **`).
static inline int cast_swr_convert_frame(SwrContext *swr, uint8_t *out, int out_count, const AVFrame *frame) {
    uint8_t *outs[1] = { out };
    if (!frame) return swr_convert(swr, outs, out_count, NULL, 0);
    return swr_convert(swr, outs, out_count, (const uint8_t **)frame->extended_data, frame->nb_samples);
}
#endif
