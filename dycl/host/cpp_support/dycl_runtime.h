// dycl C++ host runtime: the fixed support that a generated host.cpp uses.
//
// Header-only, C++17, on the TVM FFI headers and the TVM runtime of the
// `apache-tvm` wheel (link: -ltvm_runtime -ltvm_ffi). It mirrors the Python
// host (dycl/host/python.py and load_tvm in dycl/backends/tvm.py):
//   * SubDnn: one compiled sub-DNN (a Relax VM executable, `export_library`);
//     host scalars passed to it become 0-d tensors (int64 -> int64,
//     double -> float32, bool -> bool); its outputs come back as a vector.
//   * to_bool / item_*: reads of one-element tensors (predicates, dycl.item).
//   * read_npy / write_npy, check_input, a 64-byte aligned CPU allocator.
// Inductor sub-DNNs (AotiSubDnn, on libtorch) are in dycl_aoti.h, included at the
// end of this header where the generated host defines DYCL_WITH_AOTI.
// Every failure throws dycl::Error with a message naming the file, sub-DNN or input.
#ifndef DYCL_RUNTIME_H_
#define DYCL_RUNTIME_H_

#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace dycl {

namespace ffi = ::tvm::ffi;

using Tensor = ffi::Tensor;
/*! A host value: a tensor, or a Python int / float / bool. */
using Value = std::variant<Tensor, int64_t, double, bool>;

/*! Every failure of the runtime (and of generated code) throws this. */
struct Error : std::runtime_error {
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------

inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};
inline constexpr DLDataType kInt32{kDLInt, 32, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};
inline constexpr DLDataType kBool{kDLBool, 8, 1};  // TVM's and torch's bool: one byte

inline bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/*! Whether `t` holds booleans (DLPack bool, or TVM's older uint1 spelling). */
inline bool is_bool(DLDataType t) {
  return t.lanes == 1 && ((t.code == kDLBool && t.bits == 8) || (t.code == kDLUInt && t.bits == 1));
}

/*! numpy/torch-style name: float32, int64, bool, ... */
inline std::string dtype_name(DLDataType t) {
  if (is_bool(t)) return "bool";
  std::string base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLBool: base = "bool"; break;
    default: base = "dtype" + std::to_string(int(t.code)) + "_"; break;
  }
  std::string s = base + std::to_string(int(t.bits));
  if (t.lanes != 1) s += "x" + std::to_string(int(t.lanes));
  return s;
}

/*! "1x16", "?x16" (-1: any size), "scalar" for 0-d. */
inline std::string shape_str(const int64_t* shape, size_t ndim) {
  if (ndim == 0) return "scalar";
  std::string s;
  for (size_t i = 0; i < ndim; ++i) {
    if (i) s += "x";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s;
}

inline std::string describe(const Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  return shape_str(t.shape().data(), t.shape().size()) + " " + dtype_name(t.dtype());
}

inline std::string describe(const Value& v) {
  switch (v.index()) {
    case 0: return describe(std::get<Tensor>(v));
    case 1: return "an int64 scalar";
    case 2: return "a float64 scalar";
    default: return "a bool scalar";
  }
}

inline std::string device_str(DLDevice d) {
  const char* name = d.device_type == kDLCPU ? "cpu" : d.device_type == kDLCUDA ? "cuda"
                     : d.device_type == kDLCUDAHost ? "cuda_host" : nullptr;
  std::string s = name ? name : "device" + std::to_string(int(d.device_type));
  return s + ":" + std::to_string(d.device_id);
}

// ---------------------------------------------------------------------------
// CPU allocation (TVM kernels require 64-byte aligned data)
// ---------------------------------------------------------------------------

inline constexpr size_t kAlignment = 64;

/*! The NDAllocator for Tensor::FromNDAlloc: 64-byte aligned host memory. */
struct CpuAlloc {
  void AllocData(DLTensor* t) {
    size_t bytes = ffi::GetDataSize(*t);
    size_t padded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    if (padded == 0) padded = kAlignment;  // a 0-element tensor still gets a valid pointer
    t->data = std::aligned_alloc(kAlignment, padded);
    if (t->data == nullptr) throw std::bad_alloc();
  }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

inline constexpr DLDevice kCpu{kDLCPU, 0};

/*! An uninitialised, compact CPU tensor. */
inline Tensor empty(const std::vector<int64_t>& shape, DLDataType dtype) {
  return Tensor::FromNDAlloc(CpuAlloc(), ffi::ShapeView(shape.data(), shape.size()), dtype, kCpu);
}

/*! 0-d CPU tensors of host scalars (int64, float32 — as the Python host —, bool). */
inline Tensor scalar_tensor(int64_t v) {
  Tensor t = Tensor::FromNDAlloc(CpuAlloc(), ffi::ShapeView(), kInt64, kCpu);
  *static_cast<int64_t*>(t.data_ptr()) = v;
  return t;
}
inline Tensor scalar_tensor(double v, DLDataType dtype = kFloat32) {
  Tensor t = Tensor::FromNDAlloc(CpuAlloc(), ffi::ShapeView(), dtype, kCpu);
  if (same_dtype(dtype, kFloat64)) {
    *static_cast<double*>(t.data_ptr()) = v;
  } else {
    *static_cast<float*>(t.data_ptr()) = static_cast<float>(v);
  }
  return t;
}
inline Tensor scalar_tensor(bool v) {
  Tensor t = Tensor::FromNDAlloc(CpuAlloc(), ffi::ShapeView(), kBool, kCpu);
  *static_cast<uint8_t*>(t.data_ptr()) = v ? 1 : 0;
  return t;
}

// ---------------------------------------------------------------------------
// Errors from TVM, device copies
// ---------------------------------------------------------------------------

/*! The one-line message of a TVM FFI error or std::exception. */
inline std::string error_message(const std::exception& e) {
  if (auto* fe = dynamic_cast<const ffi::Error*>(&e)) {
    std::string m = fe->message();
    std::string k = fe->kind();
    return k.empty() ? m : k + ": " + m;
  }
  return e.what();
}

namespace detail {

/*! A global function of the TVM runtime, looked up once. */
inline const ffi::Function& runtime_func(const char* name) {
  static std::mutex mu;
  static std::unordered_map<std::string, ffi::Function> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  std::optional<ffi::Function> f = ffi::Function::GetGlobal(name);
  if (!f.has_value()) {
    throw Error(std::string("the TVM runtime has no function '") + name +
                "' (is libtvm_runtime.so linked and loaded?)");
  }
  return cache.emplace(name, *f).first->second;
}

inline bool is_compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline int64_t numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

}  // namespace detail

/*! A compact CPU copy of `t` (any strides, any device TVM can copy from). */
inline Tensor to_host(const Tensor& t) {
  const DLTensor& src = *t.GetDLTensorPtr();
  std::vector<int64_t> shape(src.shape, src.shape + src.ndim);
  Tensor out = empty(shape, src.dtype);
  size_t bytes = ffi::GetDataSize(*out.GetDLTensorPtr());
  if (bytes == 0) return out;
  if (src.device.device_type != kDLCPU && src.device.device_type != kDLCUDAHost) {
    if (!detail::is_compact(src)) {
      throw Error("cannot copy a strided " + describe(t) + " tensor from " + device_str(src.device));
    }
    try {
      detail::runtime_func("runtime.TVMTensorCopyToBytes")(const_cast<DLTensor*>(&src), out.data_ptr(), bytes);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error("cannot copy a " + describe(t) + " tensor from " + device_str(src.device) + ": " + error_message(e));
    }
    return out;
  }
  const char* base = static_cast<const char*>(src.data) + src.byte_offset;
  char* dst = static_cast<char*>(out.data_ptr());
  if (detail::is_compact(src)) {
    std::memcpy(dst, base, bytes);
    return out;
  }
  // A strided view: gather element by element, last dimension fastest.
  size_t elem = (size_t(src.dtype.bits) * src.dtype.lanes + 7) / 8;
  int64_t n = detail::numel(src);
  std::vector<int64_t> index(src.ndim, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (int d = 0; d < src.ndim; ++d) offset += index[d] * src.strides[d];
    std::memcpy(dst + k * elem, base + offset * int64_t(elem), elem);
    for (int d = src.ndim - 1; d >= 0; --d) {
      if (++index[d] < src.shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

/*! `t` on `device` (the same tensor if it is there already). */
inline Tensor to_device(const Tensor& t, DLDevice device) {
  DLDevice d = t.device();
  if (d.device_type == device.device_type && d.device_id == device.device_id) return t;
  Tensor src = d.device_type == kDLCPU ? t : to_host(t);
  if (device.device_type == kDLCPU) return src.device().device_type == kDLCPU ? src : to_host(src);
  try {
    const DLTensor& s = *src.GetDLTensorPtr();
    ffi::Shape shape(std::vector<int64_t>(s.shape, s.shape + s.ndim));
    Tensor out = detail::runtime_func("runtime.TVMTensorAllocWithScope")(shape, s.dtype, device, nullptr)
                     .cast<Tensor>();
    Tensor host = detail::is_compact(s) && s.byte_offset == 0 ? src : to_host(src);
    detail::runtime_func("runtime.TVMTensorCopyFromBytes")(const_cast<DLTensor*>(out.GetDLTensorPtr()),
                                                          host.data_ptr(),
                                                          ffi::GetDataSize(*host.GetDLTensorPtr()));
    return out;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("cannot copy a " + describe(t) + " tensor to " + device_str(device) + ": " + error_message(e));
  }
}

// ---------------------------------------------------------------------------
// Predicate and scalar reads
// ---------------------------------------------------------------------------

namespace detail {

/*! The single element of a one-element tensor, as (double, int64, is_float). */
struct Element {
  double f = 0;
  int64_t i = 0;
  bool is_float = false;
};

inline Element read_element(const Tensor& t, const char* what) {
  if (!t.defined()) throw Error(std::string(what) + ": an undefined tensor");
  const DLTensor& dl = *t.GetDLTensorPtr();
  if (numel(dl) != 1) {
    throw Error(std::string(what) + " needs a one-element tensor, got " + describe(t));
  }
  DLDataType dt = dl.dtype;
  size_t elem = (size_t(dt.bits) * dt.lanes + 7) / 8;
  if (dt.lanes != 1 || elem > 8) {
    throw Error(std::string(what) + ": unsupported dtype " + dtype_name(dt));
  }
  alignas(8) unsigned char buf[8] = {0};
  if (dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost) {
    std::memcpy(buf, static_cast<const char*>(dl.data) + dl.byte_offset, elem);
  } else {
    Tensor host = to_host(t);
    std::memcpy(buf, host.data_ptr(), elem);
  }
  Element e;
  if (is_bool(dt)) {
    e.i = buf[0] != 0;
    e.f = double(e.i);
    return e;
  }
  switch (dt.code) {
    case kDLInt:
      switch (dt.bits) {
        case 8: { int8_t v; std::memcpy(&v, buf, 1); e.i = v; break; }
        case 16: { int16_t v; std::memcpy(&v, buf, 2); e.i = v; break; }
        case 32: { int32_t v; std::memcpy(&v, buf, 4); e.i = v; break; }
        case 64: { int64_t v; std::memcpy(&v, buf, 8); e.i = v; break; }
        default: throw Error(std::string(what) + ": unsupported dtype " + dtype_name(dt));
      }
      e.f = double(e.i);
      return e;
    case kDLUInt:
      switch (dt.bits) {
        case 8: { uint8_t v; std::memcpy(&v, buf, 1); e.i = v; break; }
        case 16: { uint16_t v; std::memcpy(&v, buf, 2); e.i = v; break; }
        case 32: { uint32_t v; std::memcpy(&v, buf, 4); e.i = v; break; }
        case 64: { uint64_t v; std::memcpy(&v, buf, 8); e.i = int64_t(v); break; }
        default: throw Error(std::string(what) + ": unsupported dtype " + dtype_name(dt));
      }
      e.f = double(e.i);
      return e;
    case kDLFloat:
      if (dt.bits == 32) {
        float v;
        std::memcpy(&v, buf, 4);
        e.f = v;
      } else if (dt.bits == 64) {
        std::memcpy(&e.f, buf, 8);
      } else if (dt.bits == 16) {  // IEEE half
        uint16_t h;
        std::memcpy(&h, buf, 2);
        int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        double v = exp == 0 ? std::ldexp(mant, -24)
                   : exp == 31 ? (mant ? std::numeric_limits<double>::quiet_NaN()
                                       : std::numeric_limits<double>::infinity())
                               : std::ldexp(mant + 1024, exp - 25);
        e.f = (h & 0x8000) ? -v : v;
      } else {
        throw Error(std::string(what) + ": unsupported dtype " + dtype_name(dt));
      }
      e.is_float = true;
      return e;
    default:
      throw Error(std::string(what) + ": unsupported dtype " + dtype_name(dt));
  }
}

}  // namespace detail

/*! bool() of a one-element tensor (Python: a NaN is true). */
inline bool to_bool(const Tensor& t) {
  detail::Element e = detail::read_element(t, "a predicate");
  return e.is_float ? e.f != 0.0 || std::isnan(e.f) : e.i != 0;
}
/*! dycl.item of a one-element tensor as int64 (a float truncates toward zero, as int()). */
inline int64_t item_i64(const Tensor& t) {
  detail::Element e = detail::read_element(t, "item (int64)");
  if (!e.is_float) return e.i;
  if (!std::isfinite(e.f)) throw Error("item (int64): cannot convert " + std::to_string(e.f) + " to an integer");
  // Python's int() of a float this large is a big integer; a 64-bit host cannot hold it.
  if (!(e.f >= -9223372036854775808.0 && e.f < 9223372036854775808.0))
    throw Error("item (int64): int(" + std::to_string(e.f) + ") does not fit in 64 bits (the C++ host's ints)");
  return static_cast<int64_t>(e.f);
}
inline double item_f64(const Tensor& t) {
  detail::Element e = detail::read_element(t, "item (float64)");
  return e.is_float ? e.f : double(e.i);
}
inline bool item_i1(const Tensor& t) { return to_bool(t); }

// Scalar overloads (a value the host already holds): converted as Python would.
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline bool to_bool(T v) { return v != 0; }  // NaN != 0: true, as in Python
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline int64_t item_i64(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) throw Error("item (int64): cannot convert " + std::to_string(v) + " to an integer");
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      throw Error("item (int64): int(" + std::to_string(v) + ") does not fit in 64 bits (the C++ host's ints)");
  }
  return static_cast<int64_t>(v);
}
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline double item_f64(T v) { return static_cast<double>(v); }
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline bool item_i1(T v) { return v != 0; }

// On a Value (either kind).
inline bool to_bool(const Value& v) {
  return std::visit([](const auto& x) -> bool { return to_bool(x); }, v);
}
inline int64_t item_i64(const Value& v) {
  return std::visit([](const auto& x) -> int64_t { return item_i64(x); }, v);
}
inline double item_f64(const Value& v) {
  return std::visit([](const auto& x) -> double { return item_f64(x); }, v);
}
inline bool item_i1(const Value& v) {
  return std::visit([](const auto& x) -> bool { return item_i1(x); }, v);
}

/*! The tensor a Value holds (an Error naming `what` otherwise). */
inline const Tensor& as_tensor(const Value& v, const std::string& what) {
  if (auto* t = std::get_if<Tensor>(&v)) return *t;
  throw Error(what + ": expected a tensor, got " + describe(v));
}

// ---------------------------------------------------------------------------
// Input checks
// ---------------------------------------------------------------------------

inline void check_input_count(const std::vector<Value>& inputs, size_t n) {
  if (inputs.size() != n) {
    throw Error("expected " + std::to_string(n) + " input" + (n == 1 ? "" : "s") + ", got " +
                std::to_string(inputs.size()));
  }
}

/*! Input `i` must be a tensor of `shape` (-1: any size) and `dtype`:
 *  "input 1: expected shape/dtype 1x16 float32, got 4x16 float32". */
inline void check_input(const std::vector<Value>& inputs, size_t i, const std::vector<int64_t>& shape,
                        DLDataType dtype) {
  if (i >= inputs.size()) {
    throw Error("input " + std::to_string(i) + ": missing (got " + std::to_string(inputs.size()) + " inputs)");
  }
  const std::string want = shape_str(shape.data(), shape.size()) + " " + dtype_name(dtype);
  const Tensor* t = std::get_if<Tensor>(&inputs[i]);
  bool ok = t != nullptr && t->defined() && size_t(t->ndim()) == shape.size() &&
            (same_dtype(t->dtype(), dtype) || (is_bool(dtype) && is_bool(t->dtype())));
  if (ok) {
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] >= 0 && t->shape()[k] != shape[k]) ok = false;
    }
  }
  if (!ok) {
    throw Error("input " + std::to_string(i) + ": expected shape/dtype " + want + ", got " + describe(inputs[i]));
  }
}

// ---------------------------------------------------------------------------
// CUDA: the runtime's CUDA device API and the cubins nvcc built at compile time
// ---------------------------------------------------------------------------

namespace detail {

/*! SHA-256 (FIPS 180-4) as lowercase hex: the cubin index is keyed by the source's digest. */
inline std::string sha256_hex(const std::string& data) {
  static const uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg = data;
  uint64_t bit_len = uint64_t(data.size()) * 8;
  msg.push_back(char(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(char((bit_len >> (8 * i)) & 0xff));
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      const unsigned char* p = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
      w[i] = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  char out[65];
  for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return std::string(out, 64);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The file the host was built with, not another artifact's of the same name (SHA-256,
// as manifest.json records it): a host run on another directory is refused.
inline void check_file(const std::string& path, const std::string& sha256) {
  if (sha256_hex(read_file(path)) != sha256)
    throw Error("'" + path + "' is not the file this host was built with (SHA-256 differs): run each artifact "
                "with its own dycl_model / libdycl_model.so");
}

inline std::string dir_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/*! Loads libtvm_runtime_cuda.so (the wheel's CUDA device API) if no CUDA device API is registered. */
inline void ensure_cuda_runtime() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    if (ffi::Function::GetGlobal("device_api.cuda").has_value()) return;
    // Next to libtvm_runtime.so (found through its handle), else on the library path.
    std::string path = "libtvm_runtime_cuda.so";
    if (void* rt = dlopen("libtvm_runtime.so", RTLD_LAZY | RTLD_NOLOAD)) {
      char origin[4096] = {0};
      if (dlinfo(rt, RTLD_DI_ORIGIN, origin) == 0 && origin[0]) path = std::string(origin) + "/" + path;
      dlclose(rt);
    }
    if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = dlerror();
      failure = "cannot load the TVM CUDA runtime " + path + ": " + (why ? why : "unknown error");
    }
  });
  if (!failure.empty()) throw Error(failure);
}

/*! The cubins of `<sub>.cuda.json` ({sha256 of the CUDA source: cubin file}), registered as
 *  TVM's tvm_callback_cuda_compile so that loading a module does not compile its source. */
inline void use_prebuilt_cubins(const std::string& index_file) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::string> cubins;  // digest -> cubin bytes
  static bool hooked = false;
  std::ifstream probe(index_file);
  if (!probe) return;
  std::string text = read_file(index_file);
  std::lock_guard<std::mutex> lock(mu);
  // The index is a flat JSON object of string pairs (written by dycl's tvm backend).
  std::vector<std::string> strings;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    size_t j = text.find('"', i + 1);
    if (j == std::string::npos) throw Error("malformed cubin index '" + index_file + "'");
    strings.push_back(text.substr(i + 1, j - i - 1));
    i = j;
  }
  if (strings.size() % 2) throw Error("malformed cubin index '" + index_file + "'");
  for (size_t i = 0; i < strings.size(); i += 2) {
    cubins[strings[i]] = read_file(dir_name(index_file) + "/" + strings[i + 1]);
  }
  if (hooked) return;
  std::optional<ffi::Function> fallback = ffi::Function::GetGlobal("tvm_callback_cuda_compile");
  ffi::Function hook = ffi::Function::FromPacked([fallback](ffi::PackedArgs args, ffi::Any* rv) {
    std::string code = args[0].cast<std::string>();
    {
      std::lock_guard<std::mutex> hook_lock(mu);
      auto it = cubins.find(sha256_hex(code));
      if (it != cubins.end()) {
        *rv = ffi::Bytes(it->second);
        return;
      }
    }
    if (!fallback.has_value()) {
      TVM_FFI_THROW(RuntimeError) << "no prebuilt cubin for this CUDA module and no CUDA compiler";
    }
    fallback->CallPacked(args, rv);
  });
  ffi::Function::SetGlobal("tvm_callback_cuda_compile", hook, /*override=*/true);
  hooked = true;
}

}  // namespace detail

using detail::check_file;

// ---------------------------------------------------------------------------
// Sub-DNNs
// ---------------------------------------------------------------------------

/*! One compiled sub-DNN: a TVM Relax VM executable exported with export_library. */
class SubDnn {
 public:
  SubDnn() = default;

  SubDnn(const std::string& so_path, const std::string& name, DLDeviceType device, int device_id = 0)
      : name_(name), path_(so_path), device_{device, device_id} {
    try {
      if (device == kDLCUDA) {
        detail::ensure_cuda_runtime();
        if (so_path.size() > 3 && so_path.compare(so_path.size() - 3, 3, ".so") == 0) {
          detail::use_prebuilt_cubins(so_path.substr(0, so_path.size() - 3) + ".cuda.json");
        }
      }
      if (std::FILE* f = std::fopen(so_path.c_str(), "rb")) {
        std::fclose(f);
      } else {
        throw Error("cannot open '" + so_path + "'");
      }
      // A bare name is looked up on the library path: always pass one with a slash.
      std::string path = so_path.find('/') == std::string::npos ? "./" + so_path : so_path;
      ffi::Module lib = ffi::Module::LoadFromFile(path);
      ffi::Optional<ffi::Function> load_exec = lib->GetFunction("vm_load_executable");
      if (!load_exec.has_value()) throw Error("'" + so_path + "' is not a Relax VM executable (no vm_load_executable)");
      ffi::Module vm = (*load_exec)().cast<ffi::Module>();
      ffi::Optional<ffi::Function> init = vm->GetFunction("vm_initialization");
      if (!init.has_value()) throw Error("'" + so_path + "' has no vm_initialization");
      // (device type, device id, allocator) per device; 2 = pooled allocator. A GPU VM also
      // needs the CPU, for shape functions (as tvm.runtime.vm.VirtualMachine sets it up).
      constexpr int kPooled = 2;
      if (device == kDLCPU) {
        (*init)(int(kDLCPU), device_id, kPooled);
      } else {
        (*init)(int(device), device_id, kPooled, int(kDLCPU), 0, kPooled);
      }
      ffi::Optional<ffi::Function> main = vm->GetFunction("main");
      if (!main.has_value()) throw Error("'" + so_path + "' has no function main");
      lib_ = lib;
      vm_ = vm;
      main_ = *main;
    } catch (const Error& e) {
      throw Error("sub-DNN " + name + ": " + e.what());
    } catch (const std::exception& e) {
      throw Error("sub-DNN " + name + ": cannot load '" + so_path + "': " + error_message(e));
    }
  }

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  DLDevice device() const { return device_; }
  bool loaded() const { return main_.defined(); }

  /*! Runs main: scalars become 0-d tensors; returns the outputs in order. */
  std::vector<Tensor> operator()(const std::vector<Value>& args) const {
    if (!main_.defined()) throw Error("sub-DNN " + (name_.empty() ? std::string("?") : name_) + " is not loaded");
    constexpr size_t kInline = 8;
    std::array<ffi::AnyView, kInline> inline_views;
    std::vector<ffi::AnyView> heap_views;
    ffi::AnyView* views = inline_views.data();
    if (args.size() > kInline) {
      heap_views.resize(args.size());
      views = heap_views.data();
    }
    // 0-d tensors made for scalar arguments, alive until the call returns.
    std::array<Tensor, kInline> inline_temps;
    std::vector<Tensor> heap_temps;
    Tensor* temps = inline_temps.data();
    if (args.size() > kInline) {
      heap_temps.resize(args.size());
      temps = heap_temps.data();
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const Value& a = args[i];
      if (const Tensor* t = std::get_if<Tensor>(&a)) {
        if (!t->defined()) throw Error("sub-DNN " + name_ + ": input " + std::to_string(i) + " is an undefined tensor");
        DLDevice d = t->device();
        if (d.device_type == device_.device_type && d.device_id == device_.device_id) {
          views[i] = *t;
        } else {  // e.g. a host tensor for a GPU sub-DNN: the VM's main does not move it
          temps[i] = to_device(*t, device_);
          views[i] = temps[i];
        }
        continue;
      }
      Tensor s;
      switch (a.index()) {
        case 1: s = scalar_tensor(std::get<int64_t>(a)); break;
        case 2: s = scalar_tensor(std::get<double>(a), kFloat32); break;
        default: s = scalar_tensor(std::get<bool>(a)); break;
      }
      if (device_.device_type != kDLCPU) s = to_device(s, device_);
      temps[i] = std::move(s);
      views[i] = temps[i];
    }
    ffi::Any result;
    try {
      main_.CallPacked(views, static_cast<int32_t>(args.size()), &result);
    } catch (const std::exception& e) {
      std::string inputs;
      for (size_t i = 0; i < args.size(); ++i) inputs += (i ? ", " : "") + describe(args[i]);
      throw Error("sub-DNN " + name_ + " failed (inputs: " + inputs + "): " + error_message(e));
    }
    std::vector<Tensor> out;
    // One output: a Tensor. Several: an Array of them (a Relax tuple).
    if (auto t = result.as<Tensor>()) {
      out.push_back(std::move(*t));
      return out;
    }
    if (auto arr = result.as<ffi::Array<ffi::Any>>()) {
      out.reserve(arr->size());
      for (size_t i = 0; i < arr->size(); ++i) out.push_back(output((*arr)[i], i));
      return out;
    }
    out.push_back(output(result, 0));
    return out;
  }

 private:
  /*! An output as a tensor: a Relax PrimValue (int/float/bool) becomes a 0-d CPU tensor. */
  Tensor output(const ffi::Any& v, size_t i) const {
    if (auto t = v.as<Tensor>()) return *t;
    if (auto b = v.as<bool>()) return scalar_tensor(*b);
    if (auto n = v.as<int64_t>()) return scalar_tensor(*n);
    if (auto f = v.as<double>()) return scalar_tensor(*f, kFloat64);
    throw Error("sub-DNN " + name_ + ": output " + std::to_string(i) + " is a " + v.GetTypeKey() +
                ", not a tensor");
  }

  std::string name_;
  std::string path_;
  DLDevice device_{kDLCPU, 0};
  std::optional<ffi::Module> lib_;
  std::optional<ffi::Module> vm_;
  ffi::Function main_;
};

// ---------------------------------------------------------------------------
// .npy files
// ---------------------------------------------------------------------------

namespace detail {

inline bool npy_dtype(const std::string& descr, DLDataType* out) {
  if (descr.size() < 3) return false;
  char order = descr[0];
  std::string kind = descr.substr(1);
  if (kind == "b1" && (order == '|' || order == '<' || order == '=')) { *out = kBool; return true; }
  if (order != '<' && order != '=') return false;  // big-endian or unknown
  if (kind == "f4") { *out = kFloat32; return true; }
  if (kind == "f8") { *out = kFloat64; return true; }
  if (kind == "i4") { *out = kInt32; return true; }
  if (kind == "i8") { *out = kInt64; return true; }
  return false;
}

inline const char* npy_descr(DLDataType t) {
  if (is_bool(t)) return "|b1";
  if (same_dtype(t, kFloat32)) return "<f4";
  if (same_dtype(t, kFloat64)) return "<f8";
  if (same_dtype(t, kInt32)) return "<i4";
  if (same_dtype(t, kInt64)) return "<i8";
  return nullptr;
}

/*! The value of `key` in a .npy header dict, as the raw text after the colon. */
inline std::string npy_field(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) k = header.find("\"" + key + "\"");
  if (k == std::string::npos) return "";
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return "";
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos) return "";
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    return end == std::string::npos ? "" : header.substr(start, end - start + 1);
  }
  if (header[start] == '\'' || header[start] == '"') {
    end = header.find(header[start], start + 1);
    return end == std::string::npos ? "" : header.substr(start + 1, end - start - 1);
  }
  end = header.find_first_of(",}", start);
  std::string v = header.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace detail

/*! A .npy file (v1-v3, little-endian, C order; f32 f64 i32 i64 bool) as a CPU tensor. */
inline Tensor read_npy(const std::string& path) {
  auto fail = [&](const std::string& why) -> Error { return Error("cannot read '" + path + "': " + why); };
  std::ifstream f(path, std::ios::binary);
  if (!f) throw fail(std::strerror(errno));
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw fail("not a .npy file");
  int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) throw fail("truncated header");
    header_len = b[0] | (uint32_t(b[1]) << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) throw fail("truncated header");
    header_len = b[0] | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24);
  } else {
    throw fail("unsupported .npy version " + std::to_string(major));
  }
  if (header_len > (1u << 24)) throw fail("header too large");
  std::string header(header_len, '\0');
  if (!f.read(&header[0], header_len)) throw fail("truncated header");

  std::string descr = detail::npy_field(header, "descr");
  std::string fortran = detail::npy_field(header, "fortran_order");
  std::string shape_text = detail::npy_field(header, "shape");
  if (descr.empty() || fortran.empty() || shape_text.empty()) throw fail("malformed header: " + header);
  if (fortran != "False") throw fail("Fortran-order arrays are not supported (save a C-order array)");
  DLDataType dtype;
  if (!detail::npy_dtype(descr, &dtype)) {
    throw fail("unsupported dtype '" + descr +
               "' (supported: little-endian float32, float64, int32, int64, bool)");
  }
  std::vector<int64_t> shape;
  for (size_t i = 1; i + 1 < shape_text.size();) {
    size_t j = shape_text.find_first_of(",)", i);
    std::string item = shape_text.substr(i, j - i);
    size_t a = item.find_first_not_of(" "), b = item.find_last_not_of(" ");
    if (a != std::string::npos) {
      item = item.substr(a, b - a + 1);
      char* end = nullptr;
      long long v = std::strtoll(item.c_str(), &end, 10);
      if (*end != '\0' && *end != 'L') throw fail("malformed shape " + shape_text);
      if (v < 0) throw fail("malformed shape " + shape_text);
      shape.push_back(v);
    }
    if (j == std::string::npos) break;
    i = j + 1;
  }
  Tensor t = empty(shape, dtype);
  size_t bytes = ffi::GetDataSize(*t.GetDLTensorPtr());
  if (bytes && !f.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(bytes))) {
    throw fail("file too short for a " + describe(t) + " array");
  }
  return t;
}

/*! A tensor (copied to the host if needed) or a scalar (a 0-d array: int64 <i8,
 *  double <f8, bool |b1) as a .npy v1 file. */
inline void write_npy(const std::string& path, const Value& v) {
  Tensor t;
  switch (v.index()) {
    case 0: t = std::get<Tensor>(v); break;
    case 1: t = scalar_tensor(std::get<int64_t>(v)); break;
    case 2: t = scalar_tensor(std::get<double>(v), kFloat64); break;
    default: t = scalar_tensor(std::get<bool>(v)); break;
  }
  auto fail = [&](const std::string& why) -> Error { return Error("cannot write '" + path + "': " + why); };
  if (!t.defined()) throw fail("an undefined tensor");
  const char* descr = detail::npy_descr(t.dtype());
  if (descr == nullptr) throw fail("unsupported dtype " + dtype_name(t.dtype()));
  const DLTensor& dl = *t.GetDLTensorPtr();
  if (dl.device.device_type != kDLCPU || !detail::is_compact(dl)) t = to_host(t);
  std::string shape = "(";
  for (int i = 0; i < t.ndim(); ++i) shape += std::to_string(t.shape()[i]) + (t.ndim() == 1 ? "," : i + 1 < t.ndim() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;  // magic, version, length, header, '\n'
  header.append((kAlignment - total % kAlignment) % kAlignment, ' ');
  header.push_back('\n');
  if (header.size() > 65535) throw fail("header too large");
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw fail(std::strerror(errno));
  const char prefix[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  f.write(prefix, 8);
  unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                          static_cast<unsigned char>(header.size() >> 8)};
  f.write(reinterpret_cast<const char*>(len), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  const DLTensor& h = *t.GetDLTensorPtr();
  f.write(static_cast<const char*>(h.data) + h.byte_offset, static_cast<std::streamsize>(ffi::GetDataSize(h)));
  if (!f) throw fail("write failed");
}

}  // namespace dycl

#ifdef DYCL_WITH_AOTI
#include "dycl_aoti.h"
#endif

#endif  // DYCL_RUNTIME_H_
