// dycl C++ host runtime, Inductor sub-DNNs: AOTInductor packages (`<sub>.aoti.pt2`)
// run through libtorch's AOTIModelPackageLoader.
//
// dycl_runtime.h includes this header when the generated host defines
// DYCL_WITH_AOTI (a host with an Inductor sub-DNN); such a host is built with the
// torch wheel's headers, -D_GLIBCXX_USE_CXX11_ABI=<torch._C._GLIBCXX_USE_CXX11_ABI>,
// and linked with -ltorch -ltorch_cpu -lc10 (see build.sh). Hosts of TVM sub-DNNs
// only never see libtorch.
//
// AotiSubDnn has SubDnn's constructor and call operator, and follows the Python
// loader (dycl/runtime/loaders/inductor.py): host scalars become 0-d tensors
// (int64 -> int64, double -> float32, bool -> bool), inputs are dense, outputs
// come back dense (and 64-byte aligned, for a TVM sub-DNN after). Tensors cross
// between TVM's ffi::Tensor and at::Tensor through DLPack, without copies.
#ifndef DYCL_AOTI_H_
#define DYCL_AOTI_H_

#include "dycl_runtime.h"

#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace at {
// From <ATen/DLConvertor.h>, declared here: that header pulls in all of <ATen/ATen.h>,
// which doubles the host's compile time (about 5 s -> 10 s).
TORCH_API DLManagedTensor* toDLPack(const Tensor& src);
TORCH_API Tensor fromDLPack(DLManagedTensor* src, std::function<void(void*)> deleter);
}  // namespace at

namespace dycl {

namespace detail {

/*! The message of a libtorch error, without its C++ backtrace. */
inline std::string torch_error_message(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return error_message(e);
}

/*! Whether torch takes tensors of `t` (at::fromDLPack would throw otherwise). */
inline bool torch_dtype(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLFloat: return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBfloat: return t.bits == 16;
    case kDLInt: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLUInt: return t.bits == 8;
    case kDLBool: return t.bits == 8;
    default: return false;
  }
}

/*! A CPU ffi::Tensor as an at::Tensor on the same memory (kept alive by the at::Tensor). */
inline at::Tensor to_aten(const Tensor& t) {
  DLManagedTensor* m = t.ToDLPack();
  DLTensor& dl = m->dl_tensor;
  if (dl.byte_offset != 0) {  // the copy of the DLTensor is ours: fold the offset into data
    dl.data = static_cast<char*>(dl.data) + dl.byte_offset;
    dl.byte_offset = 0;
  }
  return at::fromDLPack(m, {});
}

/*! An at::Tensor as an ffi::Tensor on the same memory: dense and 64-byte aligned (what
 *  TVM's kernels take), else a dense copy first. */
inline Tensor from_aten(at::Tensor a) {
  if (!a.is_contiguous() || reinterpret_cast<uintptr_t>(a.data_ptr()) % kAlignment != 0) {
    a = a.clone(at::MemoryFormat::Contiguous);
  }
  DLManagedTensor* m = at::toDLPack(a);
  // Dense: no strides, so TVM sees compact strides (torch's may differ on size-1 dims).
  m->dl_tensor.strides = nullptr;
  try {
    return Tensor::FromDLPack(m);
  } catch (...) {
    m->deleter(m);
    throw;
  }
}

}  // namespace detail

/*! One compiled Inductor sub-DNN: an AOTInductor package (`.aoti.pt2`, model "model"). CPU only. */
class AotiSubDnn {
 public:
  AotiSubDnn() = default;

  AotiSubDnn(const std::string& pt2_path, const std::string& name, DLDeviceType device, int device_id = 0)
      : name_(name), path_(pt2_path), device_{device, device_id} {
    if (device != kDLCPU) {
      throw Error("sub-DNN " + name + ": Inductor sub-DNNs run on the CPU, not " + device_str(device_));
    }
    if (std::FILE* f = std::fopen(pt2_path.c_str(), "rb")) {
      std::fclose(f);
    } else {
      throw Error("sub-DNN " + name + ": cannot open '" + pt2_path + "'");
    }
    try {
      loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(pt2_path, "model");
    } catch (const std::exception& e) {
      throw Error("sub-DNN " + name + ": cannot load '" + pt2_path + "': " + detail::torch_error_message(e));
    }
  }

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  DLDevice device() const { return device_; }
  bool loaded() const { return loader_ != nullptr; }

  /*! Runs the package's model: scalars become 0-d tensors; returns the outputs in order. */
  std::vector<Tensor> operator()(const std::vector<Value>& args) const {
    if (!loader_) throw Error("sub-DNN " + (name_.empty() ? std::string("?") : name_) + " is not loaded");
    c10::InferenceMode no_autograd;
    std::vector<at::Tensor> inputs;
    inputs.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const Value& a = args[i];
      Tensor t;
      switch (a.index()) {
        case 0: t = std::get<Tensor>(a); break;
        case 1: t = scalar_tensor(std::get<int64_t>(a)); break;
        case 2: t = scalar_tensor(std::get<double>(a), kFloat32); break;
        default: t = scalar_tensor(std::get<bool>(a)); break;
      }
      if (!t.defined()) throw Error("sub-DNN " + name_ + ": input " + std::to_string(i) + " is an undefined tensor");
      if (!detail::torch_dtype(t.dtype())) {
        throw Error("sub-DNN " + name_ + ": input " + std::to_string(i) + " has a dtype torch does not take (" +
                    describe(t) + ")");
      }
      // The compiled kernels index their inputs as dense buffers, in host memory.
      if (t.device().device_type != kDLCPU || !detail::is_compact(*t.GetDLTensorPtr())) t = to_host(t);
      inputs.push_back(detail::to_aten(t));
    }
    std::vector<at::Tensor> outputs;
    try {
      outputs = loader_->boxed_run(std::move(inputs));
    } catch (const std::exception& e) {
      std::string described;
      for (size_t i = 0; i < args.size(); ++i) described += (i ? ", " : "") + describe(args[i]);
      throw Error("sub-DNN " + name_ + " failed (inputs: " + described + "): " + detail::torch_error_message(e));
    }
    std::vector<Tensor> out;
    out.reserve(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].defined()) throw Error("sub-DNN " + name_ + ": output " + std::to_string(i) + " is undefined");
      out.push_back(detail::from_aten(std::move(outputs[i])));
    }
    return out;
  }

 private:
  std::string name_;
  std::string path_;
  DLDevice device_{kDLCPU, 0};
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
};

}  // namespace dycl

#endif  // DYCL_AOTI_H_
