/*
 * cpu_engine_abi.c - a CPU stand-in for native/trt_shim.cpp, implementing the same C ABI (native/jetprof_trt.h),
 * so jetprof's koffi binding (src/backends/tensorrt.ts) is tested on machines without TensorRT or a GPU.
 * It is NOT TensorRT: its "engines" are small text files written by the tests:
 *
 *   jetprof-cpu-engine 1
 *   tensorrt 8.6.1                            the TensorRT version the engine claims to be built by
 *   input images 0 1 3 64 64                  name, dtype (TensorRT's numbering: 0 float; an input may be 5, uint8,
 *                                             as a model exported with --frame-input takes), dims
 *   output yolo_30 0 1 255 2 2 -10 0          ..., then bias and scale: out[k] = bias + scale * in[k % n_in]
 *
 * A dynamic dimension (-1) stands for an engine without a usable optimization profile (TensorRT's shim sets a
 * dynamic batch to its profile's largest shape; these files write that shape, e.g. `input images 0 4 3 64 64`).
 *
 * The board stand-in: two more lines make it behave like a GPU running a real model.
 *
 *   gpu-ms 95.7 0                             one run takes FIXED + PER_IMAGE x (the engine's batch) ms on the "GPU",
 *                                             spent waiting as cudaStreamSynchronize waits (sleeping: the CPU is free)
 *   replay /path/heads.bin                    the outputs are replayed from a recording of ONNX Runtime's head outputs
 *                                             on the same frames, found by a hash of each image's input, so the
 *                                             stand-in finds exactly the boxes ONNX Runtime found (bias and scale of
 *                                             the output lines are then unused)
 *
 *   stack-kib 1024                            opening the engine uses this much of the calling thread's stack, as
 *                                             CUDA's and cuDNN's initializers do on a board (koffi's async stack:
 *                                             util/koffi.ts)
 *   fault-at-run 3                            the third run of the engine dereferences a null pointer, as a crashing
 *                                             driver would (the tests of how jetprof reports a process that dies of
 *                                             SIGSEGV)
 *
 * A recording (written by test/helpers/board.ts): "JPRPLY01", u32 records, u32 floats per image (the outputs in the
 * order of the engine's output lines), then per record: u32 hash1, u32 hash2, the floats; little-endian. The hashes
 * are FNV-1a over the image's input as 32-bit words, from two offset bases (replayHash in board.ts does the same).
 *
 * Its runtime claims version 8.6.1 (8601) unless JETPROF_CPU_ENGINE_RUNTIME says otherwise (e.g. 8201), and an
 * engine from another version fails with TensorRT 8.6's own message. H2D, compute and D2H times are the host
 * times of the copies and the arithmetic. Built by the tests: gcc -shared -fPIC -O2 -Inative cpu_engine_abi.c.
 */
#include "jetprof_trt.h"

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENSORS 16

typedef struct cpu_tensor {
  jp_tensor_info info;
  float bias, scale;
  int elem;      /* bytes a value: 4 (float), 1 (uint8) */
  void *host;    /* what the caller sees */
  void *device;  /* stands for device memory */
} cpu_tensor;

/* Value k of a tensor's device memory, as a float. */
static float value_at(const cpu_tensor *t, int64_t k) {
  return t->elem == 1 ? (float)((const unsigned char *)t->device)[k] : ((const float *)t->device)[k];
}

struct jp_engine {
  int count;
  cpu_tensor tensors[MAX_TENSORS];
  double gpu_fixed_ms, gpu_per_image_ms; /* gpu-ms: time a run takes on the stand-in GPU (0: as fast as the CPU) */
  int replay_count;                      /* replay: records, their hashes and their floats */
  int64_t replay_floats;                 /* floats per image, over every output */
  uint32_t *replay_hash;                 /* 2 per record */
  float *replay_data;
  int fault_at_run, runs;                /* fault-at-run: the run that faults (0: none), and the runs so far */
  int stack_kib;                         /* stack-kib: stack an open uses */
};

static int log_severity = 1;

static int32_t fail(char *err, int32_t errLen, int32_t status, const char *format, ...) {
  if (err && errLen > 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(err, (size_t)errLen, format, args);
    va_end(args);
  }
  return status;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int32_t jp_abi_version(void) { return JP_TRT_ABI_VERSION; }

int32_t jp_runtime_version(void) {
  const char *v = getenv("JETPROF_CPU_ENGINE_RUNTIME");
  return v && *v ? atoi(v) : 8601;
}

int32_t jp_compiled_version(void) { return jp_runtime_version(); }

void jp_set_log_severity(int32_t severity) { log_severity = severity; }

int32_t jp_load_plugin(const char *path, char *err, int32_t errLen) {
  if (path && path[0] && !dlopen(path, RTLD_LAZY | RTLD_GLOBAL)) return fail(err, errLen, JP_ERR_PLUGIN, "%s", dlerror());
  return JP_OK;
}

static void free_engine(jp_engine *e) {
  if (!e) return;
  for (int i = 0; i < e->count; i++) {
    free(e->tensors[i].host);
    free(e->tensors[i].device);
  }
  free(e->replay_hash);
  free(e->replay_data);
  free(e);
}

/* FNV-1a over 32-bit words, from the given offset basis. */
static uint32_t fnv1a_words(const void *data, int64_t words, uint32_t h) {
  const uint32_t *w = (const uint32_t *)data;
  for (int64_t k = 0; k < words; k++) {
    h ^= w[k];
    h *= 16777619u;
  }
  return h;
}

/* The engine's batch: the input's first dimension. */
static int64_t engine_batch(const jp_engine *e) {
  for (int i = 0; i < e->count; i++)
    if (e->tensors[i].info.is_input) return e->tensors[i].info.nb_dims > 0 ? e->tensors[i].info.dims[0] : 1;
  return 1;
}

static int32_t load_replay(jp_engine *e, const char *path, char *err, int32_t errLen) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errLen, JP_ERR_FILE, "cannot read the replay recording %s: %s", path, strerror(errno));
  char magic[8];
  uint32_t count = 0, floats = 0;
  int64_t batch = engine_batch(e), expected = 0;
  for (int i = 0; i < e->count; i++)
    if (!e->tensors[i].info.is_input) expected += e->tensors[i].info.bytes / 4 / batch;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "JPRPLY01", 8) != 0 || fread(&count, 4, 1, f) != 1 ||
      fread(&floats, 4, 1, f) != 1 || (int64_t)floats != expected) {
    fclose(f);
    return fail(err, errLen, JP_ERR_DESERIALIZE, "%s: not a replay recording for this engine's outputs (%lld floats per image)", path, (long long)expected);
  }
  e->replay_count = (int)count;
  e->replay_floats = floats;
  e->replay_hash = malloc((size_t)count * 8);
  e->replay_data = malloc((size_t)count * floats * 4);
  for (uint32_t r = 0; r < count; r++) {
    if (fread(&e->replay_hash[2 * r], 4, 2, f) != 2 || fread(&e->replay_data[(int64_t)r * floats], 4, floats, f) != floats) {
      fclose(f);
      return fail(err, errLen, JP_ERR_DESERIALIZE, "%s: cut short at record %u of %u", path, r, count);
    }
  }
  fclose(f);
  return JP_OK;
}

/* Touches `kib` KiB of the stack below the caller, a page at a time from the top down, so that too small a stack
 * faults on its guard page instead of writing past it. */
static __attribute__((noinline)) int use_stack(int kib) {
  size_t bytes = (size_t)kib * 1024;
  volatile char *p = alloca(bytes);
  for (size_t k = bytes; k >= 4096; k -= 4096) p[k - 4096] = (char)k;
  return p[0];
}

int32_t jp_engine_open(const char *path, jp_engine **out, char *err, int32_t errLen) {
  if (!path || !out) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  *out = NULL;
  FILE *f = fopen(path, "r");
  if (!f) return fail(err, errLen, JP_ERR_FILE, "cannot read %s: %s", path, strerror(errno));
  char line[1024];
  int version = 0, major = 0, minor = 0, patch = 0;
  if (!fgets(line, sizeof line, f) || sscanf(line, "jetprof-cpu-engine %d", &version) != 1) {
    fclose(f);
    return fail(err, errLen, JP_ERR_DESERIALIZE, "1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization (Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic Tag does not match)");
  }
  if (!fgets(line, sizeof line, f) || sscanf(line, "tensorrt %d.%d.%d", &major, &minor, &patch) != 3) {
    fclose(f);
    return fail(err, errLen, JP_ERR_DESERIALIZE, "%s: no tensorrt version line", path);
  }
  int runtime = jp_runtime_version();
  int built = major * 1000 + minor * 100 + patch;
  if (built != runtime) {
    fclose(f);
    return fail(err, errLen, JP_ERR_DESERIALIZE,
                "1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization (Serialization assertion stdVersionRead == "
                "serializationVersion failed.Version tag does not match. Note: Current Version: 232, Serialized Engine Version: 213) "
                "The engine plan file is not compatible with this version of TensorRT, expecting library version %d.%d.%d got %d.%d.%d, please rebuild.",
                runtime / 1000, runtime / 100 % 10, runtime % 100, major, minor, patch);
  }
  jp_engine *e = calloc(1, sizeof *e);
  char replay_path[1024] = "";
  while (fgets(line, sizeof line, f)) {
    char kind[16];
    int consumed = 0;
    if (sscanf(line, "%15s%n", kind, &consumed) != 1) continue;
    if (strcmp(kind, "gpu-ms") == 0) {
      sscanf(line + consumed, "%lf %lf", &e->gpu_fixed_ms, &e->gpu_per_image_ms);
      continue;
    }
    if (strcmp(kind, "stack-kib") == 0) {
      sscanf(line + consumed, "%d", &e->stack_kib);
      continue;
    }
    if (strcmp(kind, "fault-at-run") == 0) {
      sscanf(line + consumed, "%d", &e->fault_at_run);
      continue;
    }
    if (strcmp(kind, "replay") == 0) {
      sscanf(line + consumed, " %1000[^\n]", replay_path);
      continue;
    }
    if (e->count == MAX_TENSORS) break;
    cpu_tensor *t = &e->tensors[e->count];
    char *p = line + consumed;
    int n = 0;
    int dims[JP_MAX_DIMS + 2];
    if (sscanf(p, "%255s %d%n", t->info.name, &t->info.dtype, &n) != 2) {
      int32_t status = fail(err, errLen, JP_ERR_DESERIALIZE, "%s: bad tensor line: %s", path, line);
      fclose(f);
      free_engine(e);
      return status;
    }
    p += n;
    int count = 0;
    while (count < JP_MAX_DIMS + 2 && sscanf(p, "%d%n", &dims[count], &n) == 1) {
      p += n;
      count++;
    }
    t->info.is_input = strcmp(kind, "input") == 0;
    t->bias = 0;
    t->scale = 1;
    if (!t->info.is_input) {
      if (count < 3) {
        int32_t status = fail(err, errLen, JP_ERR_DESERIALIZE, "%s: output %s needs dims, bias and scale", path, t->info.name);
        fclose(f);
        free_engine(e);
        return status;
      }
      t->bias = (float)dims[count - 2];
      t->scale = (float)dims[count - 1];
      count -= 2;
    }
    if (t->info.dtype != 0 && !(t->info.dtype == 5 && t->info.is_input)) {
      int32_t status = fail(err, errLen, JP_ERR_UNSUPPORTED, "tensor %s has data type %d, which jetprof does not handle", t->info.name, t->info.dtype);
      fclose(f);
      free_engine(e);
      return status;
    }
    int64_t elements = 1;
    t->info.nb_dims = count;
    for (int d = 0; d < count; d++) {
      if (dims[d] < 0) {
        int32_t status = fail(err, errLen, JP_ERR_UNSUPPORTED, "input %s has a dynamic dimension and no usable optimization profile; build the engine with trtexec --shapes=%s:Nx3xHxW", t->info.name, t->info.name);
        fclose(f);
        free_engine(e);
        return status;
      }
      t->info.dims[d] = dims[d];
      elements *= dims[d];
    }
    t->elem = t->info.dtype == 5 ? 1 : 4;
    t->info.bytes = elements * t->elem;
    t->host = calloc((size_t)elements, (size_t)t->elem);
    t->device = calloc((size_t)elements, (size_t)t->elem);
    e->count++;
  }
  fclose(f);
  if (e->stack_kib > 0) use_stack(e->stack_kib);
  if (replay_path[0]) {
    int32_t status = load_replay(e, replay_path, err, errLen);
    if (status != JP_OK) {
      free_engine(e);
      return status;
    }
  }
  *out = e;
  return JP_OK;
}

/* Each image's outputs from the recording, found by its input's hash; an image of zeros (a padded batch) gets zeros. */
static int32_t replay_outputs(jp_engine *e, const cpu_tensor *in, char *err, int32_t errLen) {
  int64_t batch = engine_batch(e);
  int64_t per_in = in->info.bytes / 4 / batch; /* 32-bit words an image (uint8 frames: 4 bytes a word) */
  for (int64_t b = 0; b < batch; b++) {
    const uint32_t *img = (const uint32_t *)in->device + b * per_in;
    uint32_t h1 = fnv1a_words(img, per_in, 2166136261u), h2 = fnv1a_words(img, per_in, 2166136261u ^ 0x5bd1e995u);
    const float *rec = NULL;
    for (int r = 0; r < e->replay_count && !rec; r++)
      if (e->replay_hash[2 * r] == h1 && e->replay_hash[2 * r + 1] == h2) rec = e->replay_data + (int64_t)r * e->replay_floats;
    int zero = 1;
    for (int64_t k = 0; k < per_in && zero; k++) zero = img[k] == 0;
    if (!rec && !zero) return fail(err, errLen, JP_ERR_INFERENCE, "enqueue failed: image %lld of the batch is not in the replay recording (hash %08x%08x): record the same frames at the same size", (long long)b, h1, h2);
    int64_t offset = 0;
    for (int i = 0; i < e->count; i++) {
      cpu_tensor *t = &e->tensors[i];
      if (t->info.is_input) continue;
      int64_t per_out = t->info.bytes / 4 / batch;
      float *dst = (float *)t->device + b * per_out;
      if (rec) memcpy(dst, rec + offset, (size_t)per_out * 4);
      else memset(dst, 0, (size_t)per_out * 4);
      offset += per_out;
    }
  }
  return JP_OK;
}

/* Waits until `ms` after `since`, as a host thread waits on cudaStreamSynchronize: asleep, the CPU free. */
static void wait_until(double since, double ms) {
  double left = since + ms - now_ms();
  if (left <= 0) return;
  struct timespec ts = {(time_t)(left / 1000), (long)((left - (double)(time_t)(left / 1000) * 1000) * 1e6)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

int32_t jp_engine_tensor_count(const jp_engine *e) { return e ? e->count : 0; }

int32_t jp_engine_tensor_info(const jp_engine *e, int32_t index, jp_tensor_info *info, char *err, int32_t errLen) {
  if (!e || !info) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (index < 0 || index >= e->count) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor index %d out of range", index);
  *info = e->tensors[index].info;
  return JP_OK;
}

int32_t jp_engine_set_input(jp_engine *e, int32_t index, const void *data, int64_t bytes, char *err, int32_t errLen) {
  if (!e || !data) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (index < 0 || index >= e->count) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor index %d out of range", index);
  cpu_tensor *t = &e->tensors[index];
  if (!t->info.is_input) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor %s is not an input", t->info.name);
  if (bytes != t->info.bytes) return fail(err, errLen, JP_ERR_ARGUMENT, "input %s takes %lld bytes, got %lld", t->info.name, (long long)t->info.bytes, (long long)bytes);
  memcpy(t->host, data, (size_t)bytes);
  return JP_OK;
}

int32_t jp_engine_infer(jp_engine *e, jp_timing *timing, char *err, int32_t errLen) {
  if (!e) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (++e->runs == e->fault_at_run) {
    volatile int *nowhere = NULL;
    *nowhere = 1;
  }
  double t0 = now_ms();
  const cpu_tensor *in = NULL;
  for (int i = 0; i < e->count; i++) {
    if (!e->tensors[i].info.is_input) continue;
    memcpy(e->tensors[i].device, e->tensors[i].host, (size_t)e->tensors[i].info.bytes);
    if (!in) in = &e->tensors[i];
  }
  double t1 = now_ms();
  if (!in) return fail(err, errLen, JP_ERR_INFERENCE, "enqueue failed: the engine has no input");
  int64_t n_in = in->info.bytes / in->elem;
  if (e->replay_count > 0) {
    int32_t status = replay_outputs(e, in, err, errLen);
    if (status != JP_OK) return status;
  } else {
    for (int i = 0; i < e->count; i++) {
      cpu_tensor *t = &e->tensors[i];
      if (t->info.is_input) continue;
      int64_t n = t->info.bytes / 4;
      for (int64_t k = 0; k < n; k++) ((float *)t->device)[k] = t->bias + t->scale * value_at(in, k % n_in);
    }
  }
  /* the stand-in GPU: the run takes its declared time, the host thread asleep meanwhile */
  if (e->gpu_fixed_ms > 0 || e->gpu_per_image_ms > 0) wait_until(t1, e->gpu_fixed_ms + e->gpu_per_image_ms * (double)engine_batch(e));
  double t2 = now_ms();
  for (int i = 0; i < e->count; i++) {
    if (!e->tensors[i].info.is_input) memcpy(e->tensors[i].host, e->tensors[i].device, (size_t)e->tensors[i].info.bytes);
  }
  double t3 = now_ms();
  if (timing) {
    timing->h2d_ms = t1 - t0;
    timing->compute_ms = t2 - t1;
    timing->d2h_ms = t3 - t2;
    timing->wall_ms = t3 - t0;
  }
  if (log_severity >= 4) fprintf(stderr, "[cpu engine] inference done\n");
  return JP_OK;
}

int32_t jp_engine_get_output(const jp_engine *e, int32_t index, void *data, int64_t bytes, char *err, int32_t errLen) {
  if (!e || !data) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (index < 0 || index >= e->count) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor index %d out of range", index);
  const cpu_tensor *t = &e->tensors[index];
  if (bytes != t->info.bytes) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor %s holds %lld bytes, asked for %lld", t->info.name, (long long)t->info.bytes, (long long)bytes);
  memcpy(data, t->host, (size_t)bytes);
  return JP_OK;
}

void jp_engine_close(jp_engine *e) { free_engine(e); }
