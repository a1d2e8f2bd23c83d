#include "cuda/cublas_loader.h"

#include <dlfcn.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace stagger {
namespace {

std::atomic<bool> opened{false};

// cublas_v2.h maps the API's names onto versioned symbols (cublasCreate -> cublasCreate_v2): the
// symbol to look up is the macro's expansion.
#define STAGGER_SYMBOL_NAME(name) STAGGER_SYMBOL_STRING(name)
#define STAGGER_SYMBOL_STRING(name) #name

template <class F>
void resolve(void* library, const char* symbol, F& function) {
  function = reinterpret_cast<F>(dlsym(library, symbol));
  if (!function) throw std::runtime_error(std::string("cuBLAS: ") + STAGGER_CUBLAS_LIBRARY + " has no " + symbol);
}

CublasApi open_cublas() {
  // The toolkit's library that the build found, else the same name on the loader's search path.
  void* library = dlopen(STAGGER_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!library) library = dlopen(STAGGER_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("cuBLAS: cannot open ") + STAGGER_CUBLAS_LIBRARY + " (" +
                             (why ? why : "unknown reason") + ")");
  }
  CublasApi api{};
  resolve(library, STAGGER_SYMBOL_NAME(cublasCreate), api.create);
  resolve(library, STAGGER_SYMBOL_NAME(cublasDestroy), api.destroy);
  resolve(library, STAGGER_SYMBOL_NAME(cublasSetStream), api.set_stream);
  resolve(library, STAGGER_SYMBOL_NAME(cublasDgemvStridedBatched), api.dgemv_strided_batched);
  resolve(library, STAGGER_SYMBOL_NAME(cublasSgemvStridedBatched), api.sgemv_strided_batched);
  resolve(library, STAGGER_SYMBOL_NAME(cublasGetStatusString), api.status_string);
  opened = true;
  return api;  // the library stays open for the process's lifetime
}

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = open_cublas();  // a failed first call throws, and the next one retries
  return api;
}

bool cublas_opened() { return opened; }

}  // namespace stagger
