// dycl_model: runs a model compiled by dycl through its C API only (dycl_model.h),
// as an application embedding it would; .npy files in and out.
//
//   dycl_model ARTIFACT_DIR [-o OUT_DIR] [--repeat N] in0.npy [in1.npy ...]
//
// Writes OUT_DIR/output_<i>.npy per flattened output and prints one line per output
// (as `dycl run` does); --repeat N times N more calls and prints the mean per call.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "dycl_model.h"
#include "dycl_runtime.h"  // read_npy / write_npy only: the model is reached through the C API

namespace {

const char* kUsage =
    "usage: dycl_model ARTIFACT_DIR [-o OUT_DIR] [--repeat N] INPUT.npy [INPUT.npy ...]\n"
    "  runs the compiled model on the inputs; writes OUT_DIR/output_<i>.npy per output\n"
    "  --repeat N   also time N calls and print the mean time per call\n";

struct UsageError {
  std::string message;
};

int fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "dycl_model: error: %s\n", message.c_str());
  return code;
}

struct Outputs {
  DLManagedTensor** array = nullptr;
  int n = 0;
  void release() {
    for (int i = 0; i < n; ++i) {
      if (array[i] && array[i]->deleter) array[i]->deleter(array[i]);
    }
    if (array) dycl_free_outputs(array, n);
    array = nullptr;
    n = 0;
  }
  ~Outputs() { release(); }
};

/*! mkdir -p */
void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0777);
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw dycl::Error("cannot create the output directory '" + path + "'");
  }
}

double sum_of(const dycl::Tensor& t) {
  const DLTensor& dl = *t.GetDLTensorPtr();
  int64_t n = t.numel();
  const char* p = static_cast<const char*>(dl.data) + dl.byte_offset;
  double s = 0;
  DLDataType d = dl.dtype;
  for (int64_t i = 0; i < n; ++i) {
    if (dycl::is_bool(d)) s += reinterpret_cast<const uint8_t*>(p)[i] != 0;
    else if (dycl::same_dtype(d, dycl::kFloat32)) s += reinterpret_cast<const float*>(p)[i];
    else if (dycl::same_dtype(d, dycl::kFloat64)) s += reinterpret_cast<const double*>(p)[i];
    else if (dycl::same_dtype(d, dycl::kInt32)) s += reinterpret_cast<const int32_t*>(p)[i];
    else if (dycl::same_dtype(d, dycl::kInt64)) s += double(reinterpret_cast<const int64_t*>(p)[i]);
    else return std::nan("");
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string artifact, out_dir;
  std::vector<std::string> input_files;
  long repeat = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "-o" || a == "--output") {
        if (++i >= argc) throw UsageError{a + " needs a directory"};
        out_dir = argv[i];
      } else if (a == "--repeat") {
        if (++i >= argc) throw UsageError{"--repeat needs a number"};
        char* end = nullptr;
        repeat = std::strtol(argv[i], &end, 10);
        if (*end != '\0' || repeat < 1) throw UsageError{std::string("--repeat: not a positive number: ") + argv[i]};
      } else if (a.size() > 1 && a[0] == '-') {
        throw UsageError{"unknown option " + a};
      } else if (artifact.empty()) {
        artifact = a;
      } else {
        input_files.push_back(a);
      }
    }
    if (artifact.empty()) throw UsageError{"no artifact directory given"};
  } catch (const UsageError& e) {
    std::fputs(kUsage, stderr);
    return fail(e.message, 2);
  }

  // Inputs: .npy files as tensors, handed to the model as borrowed DLPack tensors.
  std::vector<dycl::Tensor> inputs;
  try {
    for (const auto& f : input_files) inputs.push_back(dycl::read_npy(f));
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  std::vector<DLManagedTensor*> dl_inputs;
  for (auto& t : inputs) dl_inputs.push_back(t.ToDLPack());
  struct FreeInputs {
    std::vector<DLManagedTensor*>& v;
    ~FreeInputs() {
      for (auto* m : v) m->deleter(m);
    }
  } free_inputs{dl_inputs};

  dycl_model* model = dycl_model_load(artifact.c_str());
  if (model == nullptr) return fail(dycl_last_error());
  struct FreeModel {
    dycl_model* m;
    ~FreeModel() { dycl_model_free(m); }
  } free_model{model};

  Outputs out;
  if (dycl_model_run(model, int(dl_inputs.size()), dl_inputs.data(), &out.n, &out.array) != 0) {
    return fail(dycl_last_error());
  }

  if (repeat > 0) {
    Outputs warm;  // one more call to warm up the allocators, then the timed ones
    if (dycl_model_run(model, int(dl_inputs.size()), dl_inputs.data(), &warm.n, &warm.array) != 0) {
      return fail(dycl_last_error());
    }
    warm.release();
    auto start = std::chrono::steady_clock::now();
    for (long r = 0; r < repeat; ++r) {
      Outputs o;
      if (dycl_model_run(model, int(dl_inputs.size()), dl_inputs.data(), &o.n, &o.array) != 0) {
        return fail(dycl_last_error());
      }
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::printf("mean %.3f us per call (%ld calls)\n", us / double(repeat), repeat);
  }

  try {
    if (!out_dir.empty()) make_dirs(out_dir);
    for (int i = 0; i < out.n; ++i) {
      // Take ownership of output i: the Tensor calls its deleter.
      dycl::Tensor t = dycl::Tensor::FromDLPack(out.array[i]);
      out.array[i] = nullptr;
      dycl::Tensor host = t.device().device_type == kDLCPU ? t : dycl::to_host(t);
      if (!out_dir.empty()) dycl::write_npy(out_dir + "/output_" + std::to_string(i) + ".npy", host);
      std::string shape;
      for (int k = 0; k < host.ndim(); ++k) shape += (k ? ", " : "") + std::to_string(host.shape()[k]);
      std::printf("output %d: shape [%s] %s sum=%.6f\n", i, shape.c_str(), dycl::dtype_name(host.dtype()).c_str(),
                  sum_of(host));
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return 0;
}
