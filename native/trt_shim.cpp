// trt_shim.cpp - jetprof's C ABI (jetprof_trt.h) over TensorRT's C++ API.
//
// One engine = one runtime, one execution context, one CUDA stream, four CUDA events, and one pinned host buffer
// plus one device buffer per IO tensor, all allocated at open. Inference is: H2D copies of the inputs, enqueue,
// D2H copies of the outputs, synchronize; the events split the time into H2D, GPU compute and D2H.
//
// TensorRT 8.0-8.4 (JetPack 4.6: 8.2) use the bindings API (getNbBindings, enqueueV2); 8.5 and later (JetPack 5.x:
// 8.5, JetPack 6: 8.6 and 10.x) use the named-tensor API (getNbIOTensors, setTensorAddress, enqueueV3). The choice
// is made at compile time from NvInferVersion.h. An engine with a dynamic batch (built from jetprof's ONNX, whose
// batch dimension is symbolic, with trtexec --shapes=input:Nx3xHxW) runs its profile's largest shape. Build: scripts/build-trt-shim.sh (npm run build:trt).

#include "jetprof_trt.h"

#include <NvInfer.h>
#include <NvInferPlugin.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#if NV_TENSORRT_MAJOR > 8 || (NV_TENSORRT_MAJOR == 8 && NV_TENSORRT_MINOR >= 5)
#define JP_NAMED_TENSORS 1
#else
#define JP_NAMED_TENSORS 0
#endif

namespace {

// Forwards TensorRT's messages to stderr at the chosen severity and remembers the last error, which explains
// most failures better than a status code (e.g. "The engine plan file is not compatible with this version").
class ForwardingLogger : public nvinfer1::ILogger {
 public:
  void log(Severity severity, const char *msg) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (severity <= Severity::kERROR && msg != nullptr) lastError_ = msg;
    if (static_cast<int>(severity) <= threshold_ && msg != nullptr) std::fprintf(stderr, "[TensorRT] %s\n", msg);
  }
  void setThreshold(int severity) {
    std::lock_guard<std::mutex> lock(mutex_);
    threshold_ = severity;
  }
  std::string takeLastError() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string e;
    e.swap(lastError_);
    return e;
  }

 private:
  std::mutex mutex_;
  int threshold_ = static_cast<int>(Severity::kERROR);
  std::string lastError_;
};

ForwardingLogger &logger() {
  static ForwardingLogger instance;
  return instance;
}

int32_t fail(char *err, int32_t errLen, int32_t status, const char *format, ...) {
  if (err != nullptr && errLen > 0) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(err, static_cast<size_t>(errLen), format, args);
    va_end(args);
  }
  return status;
}

int64_t dtypeSize(nvinfer1::DataType t) {
  switch (t) {
    case nvinfer1::DataType::kFLOAT:
    case nvinfer1::DataType::kINT32:
      return 4;
    case nvinfer1::DataType::kHALF:
      return 2;
    case nvinfer1::DataType::kINT8:
    case nvinfer1::DataType::kBOOL:
      return 1;
    default:
      return 0;  // FP8, BF16, INT64, INT4 ...: not an input or output jetprof handles
  }
}

struct Tensor {
  std::string name;
  bool isInput = false;
  nvinfer1::DataType dtype = nvinfer1::DataType::kFLOAT;
  nvinfer1::Dims dims{};
  int64_t bytes = 0;
  void *host = nullptr;    // pinned (cudaMallocHost)
  void *device = nullptr;  // cudaMalloc
};

bool hasDynamicDim(const nvinfer1::Dims &dims) {
  for (int32_t d = 0; d < dims.nbDims; ++d) {
    if (dims.d[d] < 0) return true;
  }
  return false;
}

double elapsedMs(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0.0f;
  return cudaEventElapsedTime(&ms, from, to) == cudaSuccess ? static_cast<double>(ms) : -1.0;
}

}  // namespace

struct jp_engine {
  std::unique_ptr<nvinfer1::IRuntime> runtime;
  std::unique_ptr<nvinfer1::ICudaEngine> engine;
  std::unique_ptr<nvinfer1::IExecutionContext> context;
  std::vector<Tensor> tensors;
  std::vector<void *> bindings;  // device pointers in binding order (bindings API only)
  cudaStream_t stream = nullptr;
  cudaEvent_t events[4] = {nullptr, nullptr, nullptr, nullptr};

  ~jp_engine() {
    for (Tensor &t : tensors) {
      if (t.host != nullptr) cudaFreeHost(t.host);
      if (t.device != nullptr) cudaFree(t.device);
    }
    for (cudaEvent_t e : events) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    context.reset();  // the context before the engine, the engine before the runtime
    engine.reset();
    runtime.reset();
  }
};

extern "C" {

int32_t jp_abi_version(void) { return JP_TRT_ABI_VERSION; }

int32_t jp_runtime_version(void) { return getInferLibVersion(); }

int32_t jp_compiled_version(void) { return NV_TENSORRT_VERSION; }

void jp_set_log_severity(int32_t severity) { logger().setThreshold(severity); }

int32_t jp_load_plugin(const char *path, char *err, int32_t errLen) {
  if (path != nullptr && path[0] != '\0' && dlopen(path, RTLD_LAZY | RTLD_GLOBAL) == nullptr) {
    return fail(err, errLen, JP_ERR_PLUGIN, "%s", dlerror());
  }
  if (!initLibNvInferPlugins(&logger(), "")) {
    std::string why = logger().takeLastError();
    return fail(err, errLen, JP_ERR_PLUGIN, "initLibNvInferPlugins failed%s%s", why.empty() ? "" : ": ", why.c_str());
  }
  return JP_OK;
}

int32_t jp_engine_open(const char *path, jp_engine **out, char *err, int32_t errLen) {
  if (path == nullptr || out == nullptr) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  *out = nullptr;
  std::ifstream file(path, std::ios::binary);
  if (!file) return fail(err, errLen, JP_ERR_FILE, "cannot read %s: %s", path, std::strerror(errno));
  std::vector<char> blob((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (blob.empty()) return fail(err, errLen, JP_ERR_DESERIALIZE, "%s is empty", path);

  std::unique_ptr<jp_engine> e(new jp_engine());
  e->runtime.reset(nvinfer1::createInferRuntime(logger()));
  if (!e->runtime) return fail(err, errLen, JP_ERR_DESERIALIZE, "createInferRuntime failed: %s", logger().takeLastError().c_str());
  e->engine.reset(e->runtime->deserializeCudaEngine(blob.data(), blob.size()));
  if (!e->engine) {
    std::string why = logger().takeLastError();
    return fail(err, errLen, JP_ERR_DESERIALIZE, "%s", why.empty() ? "deserializeCudaEngine returned null" : why.c_str());
  }
  e->context.reset(e->engine->createExecutionContext());
  if (!e->context) return fail(err, errLen, JP_ERR_CUDA, "createExecutionContext failed: %s", logger().takeLastError().c_str());

#if JP_NAMED_TENSORS
  const int32_t count = e->engine->getNbIOTensors();
  for (int32_t i = 0; i < count; ++i) {
    Tensor t;
    t.name = e->engine->getIOTensorName(i);
    t.isInput = e->engine->getTensorIOMode(t.name.c_str()) == nvinfer1::TensorIOMode::kINPUT;
    t.dtype = e->engine->getTensorDataType(t.name.c_str());
    t.dims = e->engine->getTensorShape(t.name.c_str());
    e->tensors.push_back(t);
  }
  // An input with a dynamic dimension (an ONNX with a symbolic batch, built with trtexec --shapes=input:Nx3xHxW):
  // the context runs optimization profile 0's largest shape (N when min = opt = max, as --shapes builds it); the
  // outputs' shapes follow from the context.
  for (Tensor &t : e->tensors) {
    if (!t.isInput || !hasDynamicDim(t.dims)) continue;
    const nvinfer1::Dims max = e->engine->getProfileShape(t.name.c_str(), 0, nvinfer1::OptProfileSelector::kMAX);
    if (max.nbDims != t.dims.nbDims || hasDynamicDim(max) || !e->context->setInputShape(t.name.c_str(), max)) {
      return fail(err, errLen, JP_ERR_UNSUPPORTED, "input %s has a dynamic dimension and no usable optimization profile; build the engine with trtexec --shapes=%s:Nx3xHxW", t.name.c_str(), t.name.c_str());
    }
  }
  for (Tensor &t : e->tensors) t.dims = e->context->getTensorShape(t.name.c_str());
#else
  const int32_t count = e->engine->getNbBindings();
  for (int32_t i = 0; i < count; ++i) {
    Tensor t;
    t.name = e->engine->getBindingName(i);
    t.isInput = e->engine->bindingIsInput(i);
    t.dtype = e->engine->getBindingDataType(i);
    t.dims = e->engine->getBindingDimensions(i);
    e->tensors.push_back(t);
  }
  // A dynamic input (see above): optimization profile 0's largest shape, then every shape from the context.
  for (int32_t i = 0; i < count; ++i) {
    Tensor &t = e->tensors[static_cast<size_t>(i)];
    if (!t.isInput || !hasDynamicDim(t.dims)) continue;
    const nvinfer1::Dims max = e->engine->getProfileDimensions(i, 0, nvinfer1::OptProfileSelector::kMAX);
    if (max.nbDims != t.dims.nbDims || hasDynamicDim(max) || !e->context->setBindingDimensions(i, max)) {
      return fail(err, errLen, JP_ERR_UNSUPPORTED, "input %s has a dynamic dimension and no usable optimization profile; build the engine with trtexec --shapes=%s:Nx3xHxW", t.name.c_str(), t.name.c_str());
    }
  }
  for (int32_t i = 0; i < count; ++i) e->tensors[static_cast<size_t>(i)].dims = e->context->getBindingDimensions(i);
#endif

  if (cudaStreamCreate(&e->stream) != cudaSuccess) return fail(err, errLen, JP_ERR_CUDA, "cudaStreamCreate failed");
  for (cudaEvent_t &ev : e->events) {
    if (cudaEventCreate(&ev) != cudaSuccess) return fail(err, errLen, JP_ERR_CUDA, "cudaEventCreate failed");
  }
  for (Tensor &t : e->tensors) {
    int64_t elements = 1;
    for (int32_t d = 0; d < t.dims.nbDims; ++d) {
      if (t.dims.d[d] < 0) {
        return fail(err, errLen, JP_ERR_UNSUPPORTED, "tensor %s has a dynamic dimension after the input shapes were set; build the engine with trtexec --shapes=%s:Nx3xHxW",
                    t.name.c_str(), t.name.c_str());
      }
      elements *= static_cast<int64_t>(t.dims.d[d]);
    }
    const int64_t size = dtypeSize(t.dtype);
    if (size == 0) return fail(err, errLen, JP_ERR_UNSUPPORTED, "tensor %s has data type %d, which jetprof does not handle", t.name.c_str(), static_cast<int>(t.dtype));
    t.bytes = elements * size;
    if (cudaMallocHost(&t.host, static_cast<size_t>(t.bytes)) != cudaSuccess) return fail(err, errLen, JP_ERR_CUDA, "cudaMallocHost(%lld) failed", static_cast<long long>(t.bytes));
    if (cudaMalloc(&t.device, static_cast<size_t>(t.bytes)) != cudaSuccess) return fail(err, errLen, JP_ERR_CUDA, "cudaMalloc(%lld) failed", static_cast<long long>(t.bytes));
#if JP_NAMED_TENSORS
    if (!e->context->setTensorAddress(t.name.c_str(), t.device)) return fail(err, errLen, JP_ERR_CUDA, "setTensorAddress(%s) failed", t.name.c_str());
#else
    e->bindings.push_back(t.device);
#endif
  }
  *out = e.release();
  return JP_OK;
}

int32_t jp_engine_tensor_count(const jp_engine *engine) { return engine == nullptr ? 0 : static_cast<int32_t>(engine->tensors.size()); }

int32_t jp_engine_tensor_info(const jp_engine *engine, int32_t index, jp_tensor_info *info, char *err, int32_t errLen) {
  if (engine == nullptr || info == nullptr) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (index < 0 || index >= static_cast<int32_t>(engine->tensors.size())) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor index %d out of range", index);
  const Tensor &t = engine->tensors[static_cast<size_t>(index)];
  std::memset(info, 0, sizeof(*info));
  std::snprintf(info->name, sizeof(info->name), "%s", t.name.c_str());
  info->is_input = t.isInput ? 1 : 0;
  info->dtype = static_cast<int32_t>(t.dtype);
  info->nb_dims = t.dims.nbDims;
  for (int32_t d = 0; d < t.dims.nbDims && d < JP_MAX_DIMS; ++d) info->dims[d] = static_cast<int64_t>(t.dims.d[d]);
  info->bytes = t.bytes;
  return JP_OK;
}

int32_t jp_engine_set_input(jp_engine *engine, int32_t index, const void *data, int64_t bytes, char *err, int32_t errLen) {
  if (engine == nullptr || data == nullptr) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (index < 0 || index >= static_cast<int32_t>(engine->tensors.size())) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor index %d out of range", index);
  Tensor &t = engine->tensors[static_cast<size_t>(index)];
  if (!t.isInput) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor %s is not an input", t.name.c_str());
  if (bytes != t.bytes) return fail(err, errLen, JP_ERR_ARGUMENT, "input %s takes %lld bytes, got %lld", t.name.c_str(), static_cast<long long>(t.bytes), static_cast<long long>(bytes));
  std::memcpy(t.host, data, static_cast<size_t>(bytes));
  return JP_OK;
}

int32_t jp_engine_infer(jp_engine *engine, jp_timing *timing, char *err, int32_t errLen) {
  if (engine == nullptr) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  const auto start = std::chrono::steady_clock::now();
  cudaEvent_t *ev = engine->events;
  bool ok = cudaEventRecord(ev[0], engine->stream) == cudaSuccess;
  for (Tensor &t : engine->tensors) {
    if (t.isInput) ok = ok && cudaMemcpyAsync(t.device, t.host, static_cast<size_t>(t.bytes), cudaMemcpyHostToDevice, engine->stream) == cudaSuccess;
  }
  ok = ok && cudaEventRecord(ev[1], engine->stream) == cudaSuccess;
  if (!ok) return fail(err, errLen, JP_ERR_CUDA, "host-to-device copy failed: %s", cudaGetErrorString(cudaGetLastError()));
#if JP_NAMED_TENSORS
  const bool enqueued = engine->context->enqueueV3(engine->stream);
#else
  const bool enqueued = engine->context->enqueueV2(engine->bindings.data(), engine->stream, nullptr);
#endif
  if (!enqueued) return fail(err, errLen, JP_ERR_INFERENCE, "enqueue failed: %s", logger().takeLastError().c_str());
  ok = cudaEventRecord(ev[2], engine->stream) == cudaSuccess;
  for (Tensor &t : engine->tensors) {
    if (!t.isInput) ok = ok && cudaMemcpyAsync(t.host, t.device, static_cast<size_t>(t.bytes), cudaMemcpyDeviceToHost, engine->stream) == cudaSuccess;
  }
  ok = ok && cudaEventRecord(ev[3], engine->stream) == cudaSuccess;
  ok = ok && cudaStreamSynchronize(engine->stream) == cudaSuccess;
  if (!ok) return fail(err, errLen, JP_ERR_CUDA, "device-to-host copy failed: %s", cudaGetErrorString(cudaGetLastError()));
  if (timing != nullptr) {
    timing->h2d_ms = elapsedMs(ev[0], ev[1]);
    timing->compute_ms = elapsedMs(ev[1], ev[2]);
    timing->d2h_ms = elapsedMs(ev[2], ev[3]);
    timing->wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return JP_OK;
}

int32_t jp_engine_get_output(const jp_engine *engine, int32_t index, void *data, int64_t bytes, char *err, int32_t errLen) {
  if (engine == nullptr || data == nullptr) return fail(err, errLen, JP_ERR_ARGUMENT, "null argument");
  if (index < 0 || index >= static_cast<int32_t>(engine->tensors.size())) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor index %d out of range", index);
  const Tensor &t = engine->tensors[static_cast<size_t>(index)];
  if (bytes != t.bytes) return fail(err, errLen, JP_ERR_ARGUMENT, "tensor %s holds %lld bytes, asked for %lld", t.name.c_str(), static_cast<long long>(t.bytes), static_cast<long long>(bytes));
  std::memcpy(data, t.host, static_cast<size_t>(bytes));
  return JP_OK;
}

void jp_engine_close(jp_engine *engine) { delete engine; }

}  // extern "C"
