/*
 * jetprof_trt.h - the C ABI between jetprof (TypeScript, through koffi) and a TensorRT engine.
 *
 * native/trt_shim.cpp implements it over TensorRT's C++ API (8.x bindings or 8.5+/10.x named tensors);
 * test/native/cpu_engine_abi.c implements the same functions on the CPU so the binding is tested without a GPU.
 * Every function returns a JP_* status; on failure it writes a one-line message into err (errLen bytes, NUL-ended).
 */
#ifndef JETPROF_TRT_H
#define JETPROF_TRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JP_TRT_ABI_VERSION 1
#define JP_MAX_DIMS 8

enum jp_status {
  JP_OK = 0,
  JP_ERR_ARGUMENT = 1,    /* null pointer, index out of range, wrong byte count */
  JP_ERR_FILE = 2,        /* engine file missing or unreadable */
  JP_ERR_DESERIALIZE = 3, /* not an engine, or built by another TensorRT version */
  JP_ERR_PLUGIN = 4,      /* plugin library missing or failed to register */
  JP_ERR_CUDA = 5,        /* a CUDA call failed */
  JP_ERR_UNSUPPORTED = 6, /* a dynamic shape without a usable profile, or a tensor type jetprof does not handle */
  JP_ERR_INFERENCE = 7    /* enqueue failed */
};

/* TensorRT's nvinfer1::DataType values (kFLOAT=0, kHALF=1, kINT8=2, kINT32=3, kBOOL=4, kUINT8=5, ...). */
typedef struct jp_tensor_info {
  char name[256];
  int32_t is_input;
  int32_t dtype;
  int32_t nb_dims;
  int64_t dims[JP_MAX_DIMS];
  int64_t bytes; /* size of one buffer of this tensor */
} jp_tensor_info;

/* Milliseconds. h2d/compute/d2h from CUDA events on the engine's stream; wall from the host clock. */
typedef struct jp_timing {
  double h2d_ms;
  double compute_ms;
  double d2h_ms;
  double wall_ms;
} jp_timing;

typedef struct jp_engine jp_engine;

int32_t jp_abi_version(void);
/* The runtime library's version as getInferLibVersion() reports it (8601 for 8.6.1, 100300 for 10.3.0). */
int32_t jp_runtime_version(void);
/* The version the shim was compiled against, same encoding as jp_runtime_version. */
int32_t jp_compiled_version(void);
/* TensorRT messages at this severity or worse go to stderr (0 internal error .. 4 verbose). Default 1 (errors). */
void jp_set_log_severity(int32_t severity);
/* dlopen()s a plugin library (e.g. tensorrt_demos' libyolo_layer.so) and registers TensorRT's own plugins. */
int32_t jp_load_plugin(const char *path, char *err, int32_t errLen);
/* Deserializes an engine and allocates its pinned host buffers, device buffers, stream and events once. A dynamic
   input dimension (a symbolic batch) is set to optimization profile 0's largest shape; tensor_info reports the
   shapes the engine then runs. */
int32_t jp_engine_open(const char *path, jp_engine **out, char *err, int32_t errLen);
int32_t jp_engine_tensor_count(const jp_engine *engine);
int32_t jp_engine_tensor_info(const jp_engine *engine, int32_t index, jp_tensor_info *info, char *err, int32_t errLen);
/* Copies `bytes` bytes into tensor `index`'s pinned host buffer (bytes must equal the tensor's size). */
int32_t jp_engine_set_input(jp_engine *engine, int32_t index, const void *data, int64_t bytes, char *err, int32_t errLen);
/* H2D copies, enqueue, D2H copies, synchronize. Blocks until the outputs are in the host buffers. */
int32_t jp_engine_infer(jp_engine *engine, jp_timing *timing, char *err, int32_t errLen);
/* Copies tensor `index`'s host buffer out (bytes must equal the tensor's size). */
int32_t jp_engine_get_output(const jp_engine *engine, int32_t index, void *data, int64_t bytes, char *err, int32_t errLen);
void jp_engine_close(jp_engine *engine);

#ifdef __cplusplus
}
#endif

#endif
