// What this program runs on, asked of the libraries actually loaded rather than of the folder the build
// found: LibTorch's own build options (its version), its CUDA hooks (the CUDA runtime and cuDNN it loaded,
// when libtorch_cuda is there) and the NVIDIA driver (libcuda and NVML, opened with dlopen: a machine
// without a GPU has neither, and that is an answer too). src/runtime.rs reads these for `anatomy doctor`.
#include <ATen/detail/CUDAHooksInterface.h>
#include <caffe2/core/common.h>
#include <dlfcn.h>

#include <cstring>
#include <exception>
#include <string>

namespace {
// Copies `text` into `out` (at most `len` bytes with the closing zero); false when it did not fit.
bool copy_out(const std::string &text, char *out, size_t len) {
    if (len == 0) return false;
    size_t n = text.size() < len - 1 ? text.size() : len - 1;
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
    return n == text.size();
}

void *open_first(const char *a, const char *b) {
    void *lib = dlopen(a, RTLD_LAZY | RTLD_LOCAL);
    return lib ? lib : dlopen(b, RTLD_LAZY | RTLD_LOCAL);
}
}  // namespace

// One of LibTorch's build options (TORCH_VERSION, CUDA_VERSION, CUDNN_VERSION, ...); false if it has none.
extern "C" bool anatomy_build_option(const char *key, char *out, size_t len) {
    try {
        const auto &options = caffe2::GetBuildOptions();
        auto found = options.find(key);
        return found != options.end() && copy_out(found->second, out, len);
    } catch (const std::exception &) {
        return false;
    }
}

// The path of the LibTorch library this process loaded.
extern "C" bool anatomy_libtorch_path(char *out, size_t len) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&caffe2::GetBuildOptions), &info) == 0 || info.dli_fname == nullptr) {
        return false;
    }
    return copy_out(info.dli_fname, out, len);
}

// The CUDA runtime's and cuDNN's versions as LibTorch's CUDA hooks report them (1000 × major + 10 ×
// minor for CUDA; 10000 × major + 100 × minor + patch for cuDNN 9), 0 for what is not there. False when
// LibTorch has no CUDA part loaded (its hooks then throw); a machine without a GPU still answers when the
// part is there.
extern "C" bool anatomy_cuda_versions(long *runtime, long *cudnn) {
    *runtime = 0;
    *cudnn = 0;
    try {
        const auto &hooks = at::detail::getCUDAHooks();
        *runtime = hooks.versionCUDART();
        try {
            if (hooks.hasCuDNN()) *cudnn = hooks.versionRuntimeCuDNN();
        } catch (const std::exception &) {
        }
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

// The driver: its release ("580.65.06", from NVML) and the CUDA version it supports (from libcuda, as
// 1000 × major + 10 × minor), and how many devices it sees. False when there is no NVIDIA driver.
extern "C" bool anatomy_cuda_driver(char *release, size_t len, int *cuda_version, int *devices) {
    *cuda_version = 0;
    *devices = 0;
    copy_out("", release, len);
    void *cuda = open_first("libcuda.so.1", "libcuda.so");
    if (cuda == nullptr) return false;
    using Init = int (*)(unsigned);
    using GetInt = int (*)(int *);
    auto init = reinterpret_cast<Init>(dlsym(cuda, "cuInit"));
    auto version = reinterpret_cast<GetInt>(dlsym(cuda, "cuDriverGetVersion"));
    auto count = reinterpret_cast<GetInt>(dlsym(cuda, "cuDeviceGetCount"));
    if (init == nullptr || version == nullptr || count == nullptr || init(0) != 0) return false;
    version(cuda_version);
    count(devices);
    void *nvml = open_first("libnvidia-ml.so.1", "libnvidia-ml.so");
    if (nvml != nullptr) {
        using NvmlInit = int (*)();
        using DriverVersion = int (*)(char *, unsigned);
        auto nvml_init = reinterpret_cast<NvmlInit>(dlsym(nvml, "nvmlInit_v2"));
        auto nvml_version = reinterpret_cast<DriverVersion>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
        auto nvml_shutdown = reinterpret_cast<NvmlInit>(dlsym(nvml, "nvmlShutdown"));
        if (nvml_init != nullptr && nvml_version != nullptr && nvml_init() == 0) {
            char text[96] = {0};
            if (nvml_version(text, sizeof text) == 0) copy_out(text, release, len);
            if (nvml_shutdown != nullptr) nvml_shutdown();
        }
    }
    return true;
}

// Device `index`'s name and total memory in bytes, as the driver reports them.
extern "C" bool anatomy_cuda_device(int index, char *name, size_t len, size_t *total_bytes) {
    *total_bytes = 0;
    void *cuda = open_first("libcuda.so.1", "libcuda.so");
    if (cuda == nullptr) return false;
    using Get = int (*)(int *, int);
    using Name = int (*)(char *, int, int);
    using Memory = int (*)(size_t *, int);
    auto get = reinterpret_cast<Get>(dlsym(cuda, "cuDeviceGet"));
    auto get_name = reinterpret_cast<Name>(dlsym(cuda, "cuDeviceGetName"));
    auto memory = reinterpret_cast<Memory>(dlsym(cuda, "cuDeviceTotalMem_v2"));
    int device = 0;
    if (get == nullptr || get_name == nullptr || memory == nullptr || get(&device, index) != 0) return false;
    char text[256] = {0};
    if (get_name(text, sizeof text - 1, device) != 0 || memory(total_bytes, device) != 0) return false;
    return copy_out(text, name, len);
}
