/* dycl_model.h: the C API of a model compiled by dycl with a C++ host.
 *
 * Link against libdycl_model.so (built in the artifact directory). Tensors cross the
 * boundary as DLPack (dlpack/dlpack.h, shipped with tvm_ffi's headers).
 *
 *   dycl_model* m = dycl_model_load("path/to/artifact");
 *   if (!m) { fprintf(stderr, "%s\n", dycl_last_error()); ... }
 *   int n_out; DLManagedTensor** out;
 *   if (dycl_model_run(m, 1, &input, &n_out, &out) != 0) { ... dycl_last_error() ... }
 *   ... use out[0..n_out-1] ...
 *   for (int i = 0; i < n_out; ++i) if (out[i]->deleter) out[i]->deleter(out[i]);
 *   dycl_free_outputs(out, n_out);
 *   dycl_model_free(m);
 *
 * A dycl_model runs one call at a time (concurrent calls on one model wait for each other).
 */
#ifndef DYCL_MODEL_H_
#define DYCL_MODEL_H_

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DYCL_API __attribute__((visibility("default")))
#else
#define DYCL_API
#endif

typedef struct dycl_model dycl_model;

/* Loads the artifact (its compiled sub-DNNs). NULL on failure: dycl_last_error() says why. */
DYCL_API dycl_model* dycl_model_load(const char* artifact_dir);

/* Runs the model on `n_inputs` tensors (borrowed: read during the call only; any
 * strides, 64-byte alignment not required, on the model's device).
 * On success returns 0 and sets *n_outputs and *outputs to a new array of new tensors
 * (the flattened outputs; a scalar output is a 0-d tensor: int64, float64 or bool).
 * The caller owns them: call each tensor's deleter, then free the array with
 * dycl_free_outputs. Output tensors stay valid after dycl_model_free.
 * On failure returns non-zero, sets dycl_last_error(), and *outputs = NULL, *n_outputs = 0. */
DYCL_API int dycl_model_run(dycl_model* model, int n_inputs, DLManagedTensor* const* inputs,
                            int* n_outputs, DLManagedTensor*** outputs);

/* Frees the array dycl_model_run returned (not the tensors in it: see dycl_model_run). */
DYCL_API void dycl_free_outputs(DLManagedTensor** outputs, int n);

/* Frees the model (NULL is allowed). */
DYCL_API void dycl_model_free(dycl_model* model);

/* The message of this thread's last failure ("" if none); valid until the next call on this thread. */
DYCL_API const char* dycl_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DYCL_MODEL_H_ */
