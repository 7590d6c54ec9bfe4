// The C API (dycl_model.h) on top of the generated host (host.cpp), which provides
// dycl_generated::{Program, load, free, run}. No C++ exception crosses this boundary.
#include "dycl_model.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "dycl_runtime.h"

namespace dycl_generated {
struct Program;
Program* load(const std::string& artifact_dir);
void free(Program*);
std::vector<dycl::Value> run(Program&, const std::vector<dycl::Value>& inputs);
}  // namespace dycl_generated

struct dycl_model {
  dycl_generated::Program* program = nullptr;
  std::mutex mu;  // the VMs run one call at a time
};

namespace {

thread_local std::string last_error;

void set_error(std::string message) {
  try {
    last_error = std::move(message);
  } catch (...) {
    last_error.clear();
  }
}

/*! Runs `f`, turning any exception into a message; returns 0 or -1. */
template <typename F>
int guarded(const char* what, F&& f) {
  try {
    f();
    last_error.clear();
    return 0;
  } catch (const dycl::Error& e) {
    set_error(e.what());
  } catch (const std::bad_alloc&) {
    set_error(std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    set_error(std::string(what) + ": " + dycl::error_message(e));
  } catch (...) {
    set_error(std::string(what) + ": unknown C++ exception");
  }
  return -1;
}

/*! A borrowed DLPack tensor as a Tensor that does not free it: a wrapper whose
 *  deleter frees only the wrapper (the caller keeps ownership of the data). */
dycl::Tensor borrow(const DLManagedTensor* in) {
  auto* wrapper = new DLManagedTensor{in->dl_tensor, nullptr, [](DLManagedTensor* self) { delete self; }};
  try {
    return dycl::Tensor::FromDLPack(wrapper);
  } catch (...) {
    delete wrapper;
    throw;
  }
}

bool aligned(const DLTensor& t) {
  return t.byte_offset == 0 && reinterpret_cast<uintptr_t>(t.data) % dycl::kAlignment == 0;
}

struct Range {
  const char* begin;
  const char* end;
};

Range data_range(const DLTensor& t) {
  const char* p = static_cast<const char*>(t.data) + t.byte_offset;
  int64_t elem = (int64_t(t.dtype.bits) * t.dtype.lanes + 7) / 8;
  int64_t n = dycl::detail::numel(t);
  if (n == 0) return {p, p};
  if (t.strides == nullptr) return {p, p + n * elem};
  int64_t lo = 0, hi = 0;  // the extreme element offsets, for any strides
  for (int i = 0; i < t.ndim; ++i) {
    int64_t step = (t.shape[i] - 1) * t.strides[i];
    (step < 0 ? lo : hi) += step;
  }
  return {p + lo * elem, p + (hi + 1) * elem};
}

bool overlaps(const Range& a, const Range& b) { return a.begin < b.end && b.begin < a.end; }

}  // namespace

extern "C" {

dycl_model* dycl_model_load(const char* artifact_dir) {
  dycl_model* model = nullptr;
  int rc = guarded("dycl_model_load", [&] {
    if (artifact_dir == nullptr) throw dycl::Error("dycl_model_load: artifact_dir is NULL");
    auto m = std::make_unique<dycl_model>();
    m->program = dycl_generated::load(artifact_dir);
    if (m->program == nullptr) throw dycl::Error("dycl_model_load: cannot load '" + std::string(artifact_dir) + "'");
    model = m.release();
  });
  return rc == 0 ? model : nullptr;
}

int dycl_model_run(dycl_model* model, int n_inputs, DLManagedTensor* const* inputs, int* n_outputs,
                   DLManagedTensor*** outputs) {
  if (outputs) *outputs = nullptr;
  if (n_outputs) *n_outputs = 0;
  return guarded("dycl_model_run", [&] {
    if (model == nullptr || model->program == nullptr) throw dycl::Error("dycl_model_run: model is NULL");
    if (n_outputs == nullptr || outputs == nullptr) throw dycl::Error("dycl_model_run: n_outputs/outputs is NULL");
    if (n_inputs < 0 || (n_inputs > 0 && inputs == nullptr)) throw dycl::Error("dycl_model_run: no input array");

    std::vector<dycl::Value> args;
    std::vector<Range> borrowed;  // the caller's memory that outputs must not alias
    args.reserve(n_inputs);
    for (int i = 0; i < n_inputs; ++i) {
      if (inputs[i] == nullptr) throw dycl::Error("input " + std::to_string(i) + ": NULL");
      const DLTensor& dl = inputs[i]->dl_tensor;
      if (dl.ndim < 0 || (dl.ndim > 0 && dl.shape == nullptr)) {
        throw dycl::Error("input " + std::to_string(i) + ": malformed DLTensor");
      }
      if (dl.data == nullptr && dycl::detail::numel(dl) != 0) throw dycl::Error("input " + std::to_string(i) + ": no data");
      dycl::Tensor t = borrow(inputs[i]);
      bool on_cpu = dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost;
      if (!dycl::detail::is_compact(dl) || !aligned(dl)) {
        // TVM's kernels take compact, 64-byte aligned buffers: copy the others.
        t = on_cpu ? dycl::to_host(t) : dycl::to_device(dycl::to_host(t), dl.device);
      } else {
        borrowed.push_back(data_range(dl));
      }
      args.emplace_back(std::move(t));
    }

    std::vector<dycl::Value> results;
    {
      std::lock_guard<std::mutex> lock(model->mu);
      results = dycl_generated::run(*model->program, args);
    }
    args.clear();

    std::vector<dycl::Tensor> tensors;
    tensors.reserve(results.size());
    for (auto& v : results) {
      dycl::Tensor t;
      switch (v.index()) {
        case 0: t = std::move(std::get<dycl::Tensor>(v)); break;
        case 1: t = dycl::scalar_tensor(std::get<int64_t>(v)); break;
        case 2: t = dycl::scalar_tensor(std::get<double>(v), dycl::kFloat64); break;
        default: t = dycl::scalar_tensor(std::get<bool>(v)); break;
      }
      if (!t.defined()) throw dycl::Error("output " + std::to_string(tensors.size()) + " is an undefined tensor");
      // The caller owns each output and may write to it: one that is (a view of) a
      // borrowed input would change the caller's input (`x * 1` simplified away) and
      // outlive its buffer; one held elsewhere too (a constant of the sub-DNN: one
      // buffer for every call) or sharing an earlier output's buffer would change
      // those. Such outputs are copied.
      const DLTensor& dl = *t.GetDLTensorPtr();
      Range r = data_range(dl);
      bool copy = t.use_count() > 1;
      for (const Range& b : borrowed) copy = copy || (r.begin != r.end && overlaps(r, b));
      for (const dycl::Tensor& earlier : tensors) {
        copy = copy || (r.begin != r.end && overlaps(r, data_range(*earlier.GetDLTensorPtr())));
      }
      if (copy) {
        bool on_cpu = dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost;
        t = on_cpu ? dycl::to_host(t) : dycl::to_device(dycl::to_host(t), dl.device);
      }
      tensors.push_back(std::move(t));
    }
    results.clear();

    auto** array = static_cast<DLManagedTensor**>(std::calloc(tensors.size() ? tensors.size() : 1, sizeof(DLManagedTensor*)));
    if (array == nullptr) throw std::bad_alloc();
    try {
      for (size_t i = 0; i < tensors.size(); ++i) array[i] = tensors[i].ToDLPack();
    } catch (...) {
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (array[i] && array[i]->deleter) array[i]->deleter(array[i]);
      }
      std::free(array);
      throw;
    }
    *outputs = array;
    *n_outputs = static_cast<int>(tensors.size());
  });
}

void dycl_free_outputs(DLManagedTensor** outputs, int n) {
  (void)n;
  std::free(outputs);
}

void dycl_model_free(dycl_model* model) {
  if (model == nullptr) return;
  guarded("dycl_model_free", [&] {
    if (model->program) dycl_generated::free(model->program);
    model->program = nullptr;
  });
  delete model;
}

const char* dycl_last_error(void) { return last_error.c_str(); }

}  // extern "C"
