// CUDA / cuDNN / framework knowledge, loaded from JSON data with a source on every row and
// validated on load. matrix/data/{toolkits,cudnn,frameworks,gpus,libraries}.json are embedded at
// build time; --matrix FILE replaces sections at run time. A matrix file is either one section
// file (its "schema" says which, e.g. "depscan-matrix/toolkits/1") or an object
// {"schema": "depscan-matrix/1", "toolkits": {...}, "cudnn": {...}, ...} holding any of them;
// sections it does not hold keep the embedded data.
#pragma once

#include <array>
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

// A dotted numeric version: "12.4", "580.65.06", "9.1.0.70".
struct Version {
  std::vector<int> parts;
  std::string spelled;  // the text it was parsed from ("580.65.06" keeps its zero); may be empty

  Version() = default;
  explicit Version(std::vector<int> numbers, std::string text = {})
      : parts(std::move(numbers)), spelled(std::move(text)) {}

  static std::optional<Version> parse(std::string_view text);
  // The release segment of a Python (PEP 440) version: "14.2.0.post1", "14.0.0rc1", "1!2.9.1+cu128"
  // give 14.2.0, 14.0.0 and 2.9.1 (pre-, post- and dev-releases count as their release).
  static std::optional<Version> parse_release(std::string_view pep440);
  std::string str() const;  // as spelled when parsed, else the numbers joined by '.'
  int major() const { return parts.empty() ? 0 : parts[0]; }
  int minor() const { return parts.size() < 2 ? 0 : parts[1]; }
  int patch() const { return parts.size() < 3 ? 0 : parts[2]; }
  // "9.1" is a prefix of "9.1.0.70" (whole components only).
  bool starts_with(const Version& prefix) const;
  // Missing components compare as 0: 12.4 == 12.4.0.
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }
};

// How sure the data is: primary = read from the vendor's page or checked on this machine;
// secondary = agreeing third-party copies of the vendor's page.
enum class RowStatus { Primary, Secondary };
const char* to_string(RowStatus status);

enum class Platform { Linux, Windows };

// ------------------------------------------------------------------ toolkits.json

struct DriverRow {              // one line of the release notes' driver table
  Version toolkit;              // 12.4.0 (GA), 12.4.1 (Update 1)
  std::string release;          // "12.4 Update 1"
  std::optional<Version> linux_driver;
  std::optional<Version> windows_driver;  // absent: N/A (no bundled driver) or unconfirmed
  std::string note;
  RowStatus status = RowStatus::Primary;
  std::string source;
  bool operator==(const DriverRow&) const = default;
};

struct MinorCompatRow {         // CUDA 11+: one driver floor runs every minor of a major
  int major = 0;
  int branch = 0;               // 525: drivers of branch >= 525 qualify
  std::optional<int> upper_branch;  // end of the range (newer drivers still run it, as backward compat)
  std::optional<Version> linux_driver;
  std::optional<Version> windows_driver;
  std::string source;
  bool operator==(const MinorCompatRow&) const = default;
};

struct FullDriverFeature {      // what minor-version compatibility does not cover
  std::string feature;
  std::string source;
  bool operator==(const FullDriverFeature&) const = default;
};

struct ArchitectureRow {        // real targets (sm_) of a toolkit, valid until the next row
  Version toolkit;
  std::vector<std::string> sm;  // "75", "90a"
  std::string note;
  std::string source;
  bool operator==(const ArchitectureRow&) const = default;
};

// ------------------------------------------------------------------ cudnn.json

struct CudnnBuild {             // one build of a cuDNN release, for a range of CUDA versions
  Version cuda_min, cuda_max;   // inclusive, compared on major.minor
  std::optional<Version> linux_driver, windows_driver;
  std::optional<Version> sm_min, sm_max;  // compute capability, when the build narrows the release's
  std::string note;
  bool operator==(const CudnnBuild&) const = default;
};

struct CudnnRelease {
  std::vector<Version> versions;  // the releases this row covers: 9.5.0, 9.5.1
  std::vector<CudnnBuild> builds;
  std::optional<Version> sm_min, sm_max;
  std::string note;
  RowStatus status = RowStatus::Primary;
  std::string source;
  std::vector<int> cuda_majors() const;  // sorted, unique
  bool operator==(const CudnnRelease&) const = default;
};

// ------------------------------------------------------------------ frameworks.json

struct FrameworkRow {
  std::string framework;        // tensorflow, pytorch, jax, cupy, onnxruntime
  std::string version;          // "2.15.0", "2.4", "14", "current"
  std::string variant;          // "cu121 (stable)", "linux tested build"
  std::string cuda;             // as the source states it: "12.2", ">=12.1", "12.x"
  std::string cudnn;
  std::string python;
  std::string note;
  RowStatus status = RowStatus::Primary;
  std::string source;
  bool operator==(const FrameworkRow&) const = default;
};

// ------------------------------------------------------------------ gpus.json

struct GpuRow {
  std::vector<std::string> names;  // "H100", "RTX 40##" ('#' = one digit)
  Version cc;                      // compute capability 9.0
  RowStatus status = RowStatus::Primary;
  std::string source;
  bool operator==(const GpuRow&) const = default;
};

struct GpuMatch {
  const GpuRow* row = nullptr;
  std::string name;             // the name of the row that matched
  Version cc;
  int sm() const { return cc.major() * 10 + cc.minor(); }  // 9.0 -> 90
};

// ------------------------------------------------------------------ libraries.json

struct ComponentSoname {
  std::string name;             // libcudart.so.12
  std::vector<int> cuda_majors; // CUDA majors shipping this SONAME; empty = any (driver, NCCL)
  std::string pip_version;      // "10.*": the releases of the pip packages that ship this SONAME; "" = any
  bool operator==(const ComponentSoname&) const = default;
};

struct ComponentRow {           // a CUDA component and its file names
  std::string component;        // driver, cudart, cublas, cublasLt, cufft, cusparse, cusolver,
                                // curand, nvrtc, nvrtc-builtins, nvjitlink, nccl, cupti, cutensor,
                                // nvinfer (TensorRT), ...
  std::string prefix;           // "libcudart.so": names are prefix + "." + version
  std::string windows_prefix;   // "cudart64_"
  std::vector<ComponentSoname> sonames;
  std::string product;          // "" for the CUDA toolkit's own; "NCCL", "cuTENSOR", "TensorRT": installed apart
  std::string source;
  bool operator==(const ComponentRow&) const = default;
};

struct CudnnSeries {            // the library layout of one cuDNN major
  int major = 0;
  std::string shim;             // libcudnn.so.9
  std::vector<std::string> sublibraries;           // always shipped
  std::vector<std::string> optional_sublibraries;  // shipped by some releases only
  std::vector<std::string> windows;
  std::string header;           // cudnn_version.h (8, 9) or cudnn.h (7)
  int version_factor = 0;       // CUDNN_VERSION = major * factor + minor * 100 + patch
  std::string source;
  bool operator==(const CudnnSeries&) const = default;
};

struct DlopenRow {              // "libraries matching `from` open `opens` at run time"
  std::vector<std::string> from;   // SONAME (or file name) globs, '*' = anything
  std::vector<std::string> opens;  // names, with {major} {minor} (the opener's version) and
                                   // {cuda_major} (the CUDA major the opener was built for)
  std::string probe;            // "" exact names; "cudnn_version_suffixes": tries name.M.m.p,
                                // name.M.m, name; "cudnn_named_sublibraries": the same, for the
                                // names the opener's .rodata has (without the SONAME's version);
                                // "library_name_strings": the names are the
                                // library's own read-only strings; "tsl_cuda_stubs": the names
                                // whose XLA stub (tsl/cuda/<key>_stub.cc) the library carries
  bool optional = false;        // the opener copes without it
  std::string unless_needed;    // a glob: no edges when the opener NEEDs a library it matches (an older
                                // release links what a newer one opens: ONNX Runtime's libcudnn)
  bool also_strings = false;    // the row adds a name its code builds; the names in the opener's
                                // read-only data are still read for the others
  std::string note;
  std::string source;
  bool operator==(const DlopenRow&) const = default;
};

struct PipPackage {             // the PyPI project shipping a component for one CUDA major
  std::string component;        // a ComponentRow::component, or "cudnn"
  int cuda_major = 0;
  std::string package;          // nvidia-cuda-runtime-cu12
  bool operator==(const PipPackage&) const = default;
};

struct PythonVariants {          // a distribution that ships a build per backend and loads one
  std::string distribution;      // bitsandbytes
  std::string since, before;     // the releases the row describes: since <= version < before ("" = open)
  std::string cuda_file;         // path under site-packages, {version} = CUDA major and minor digits ("128")
  std::string cpu_file;          // loaded when torch has no CUDA or sees no GPU
  std::vector<std::string> others;  // globs of the other backends' builds: ROCm, XPU
  std::string rule;              // "exact": torch's CUDA version only; "same_major_nearest": exact, else the
                                 // newest older minor of that major, else the oldest newer one
  std::string override_variable; // names the CUDA build to load instead (BNB_CUDA_VERSION)
  std::string source;
  bool operator==(const PythonVariants&) const = default;
};

struct OptionalModule {           // an extension module a distribution imports only in try/except ImportError
  std::string distribution;      // numba
  std::string file;              // glob under site-packages: numba/np/ufunc/tbbpool*.so
  std::string why;               // when it is imported and what the distribution does without it
  std::string fix;               // how to make it load
  std::string source;
  bool operator==(const OptionalModule&) const = default;
};

struct PythonPreload {            // a library a distribution's own Python code loads by its path before it is needed
  std::string distribution;      // librmm-cu12
  std::string file;              // glob under site-packages: librmm/lib64/librmm.so
  std::string by;                // the code that loads it, and who calls it before the modules that need it
  std::string source;
  bool operator==(const PythonPreload&) const = default;
};

// Libraries a distribution's Python code has loaded into the process before one of its modules is
// loaded (CuPy's cuda-pathfinder loads the NVIDIA wheels' cuBLAS before cupy_backends.cuda.libs.cublas):
// the module's NEEDED entries with their sonames bind to those copies, not to what its search finds.
struct LoadedFirstLibrary {
  std::vector<std::string> paths;  // under site-packages; the first that exists is loaded
  bool global = false;             // RTLD_GLOBAL: its symbols are in every later object's lookup scope
  std::string distribution;        // "": any; else only from the site-packages of the first distribution of
                                   // this name on the module's sys.path, {cuda_major} being the module's
                                   // (CuPy 13 takes only cutensor-cu12 for cupy-cuda12x)
  std::string min_version;         // "": any; else the distribution's release has this major and is at least
                                   // this (CuPy's min_pypi_version: nvidia-nccl-cu12 2.x from 2.16.5)
  bool operator==(const LoadedFirstLibrary&) const = default;
};

// A release as CuPy 13's _parse_version reads it: the text split at each of its first three
// non-digits, the first three parts read as numbers, missing ones 0. None where CuPy raises ValueError
// on an empty part (2.17rc1 gives 2, 17, ""), which makes `import cupy` fail for cuTENSOR.
std::optional<std::array<int, 3>> cupy_release_numbers(std::string_view text);

// Whether an installed release satisfies `min_version` as CuPy 13's _find_compatible_wheel checks
// it: the same major, and at least the minimum's minor and patch. A release CuPy cannot read is
// refused here (CuPy raises instead). "" accepts any release.
bool meets_min_version(std::string_view installed, std::string_view min_version);

// The distribution a row's library is taken from, {cuda_major} filled with the module's: cutensor-cu12.
// None when a copy from any distribution will do, or the name needs a major the module does not show.
std::optional<std::string> wanted_distribution_name(const LoadedFirstLibrary& library, std::optional<int> module_major);

// The same, with the releases it must have: "cutensor-cu12 2.x, at least 2.0.0"; "" when none.
std::string describe_wanted_distribution(const LoadedFirstLibrary& library, std::optional<int> module_major);

// `pattern` with each {cuda_major} replaced: cutensor-cu{cuda_major} and 12 give cutensor-cu12.
std::string cuda_major_filled(std::string_view pattern, int cuda_major);

struct LoadedFirst {
  std::vector<std::string> distributions;       // cupy-cuda12x, cupy-cuda13x
  std::string since, before;                    // the releases the row describes: since <= version < before ("" = open)
  std::vector<std::string> modules;             // globs under site-packages
  std::vector<LoadedFirstLibrary> libraries;    // in load order
  std::string by;                               // who loads them, for the edge's label
  std::string source;
  bool operator==(const LoadedFirst&) const = default;
};

// A function of a distribution that, when the application calls it, loads other wheels' libraries by
// their paths (onnxruntime.preload_dlls()): the fix for a library shipped where the loader does not look.
struct PreloadCall {
  std::vector<std::string> distributions;  // onnxruntime-gpu
  std::string since, before;               // since <= version < before ("" = open)
  std::string call;                        // onnxruntime.preload_dlls()
  std::string when;                        // after import onnxruntime and before the first InferenceSession
  std::vector<std::string> paths;          // globs under site-packages of the files it loads
  std::string source;
  bool operator==(const PreloadCall&) const = default;
};

// ------------------------------------------------------------------ the matrix

class Matrix {
 public:
  Matrix() = default;
  bool operator==(const Matrix&) const = default;  // Version compares by value, not spelling

  const std::vector<DriverRow>& drivers() const { return drivers_; }
  const std::vector<MinorCompatRow>& minor_compatibility() const { return minor_compat_; }
  const std::vector<FullDriverFeature>& full_driver_features() const { return full_driver_; }
  const std::vector<ArchitectureRow>& architectures() const { return architectures_; }
  const std::vector<CudnnRelease>& cudnn_releases() const { return cudnn_; }
  const std::string& cudnn_compatibility_source() const { return cudnn_compat_source_; }
  const std::vector<FrameworkRow>& frameworks() const { return frameworks_; }
  const std::vector<GpuRow>& gpus() const { return gpus_; }
  const std::vector<ComponentRow>& components() const { return components_; }
  const std::vector<CudnnSeries>& cudnn_series() const { return cudnn_series_; }
  const std::vector<DlopenRow>& dlopen_rows() const { return dlopen_; }
  const std::vector<PipPackage>& pip_packages() const { return pip_packages_; }
  const std::string& pip_source() const { return pip_source_; }
  const std::vector<PythonVariants>& python_variants() const { return python_variants_; }
  // The python_variants row describing this release of a distribution, or null.
  const PythonVariants* python_variants_for(std::string_view distribution, std::string_view version) const;
  // The optional_modules row whose glob matches a file of the distribution (relative to site-packages), or null.
  const OptionalModule* optional_module(std::string_view distribution, std::string_view relative) const;
  // The python_preloads row whose glob matches a file of the distribution (relative to site-packages), or null.
  const PythonPreload* python_preload(std::string_view distribution, std::string_view relative) const;
  // The loaded_first row for that release of the distribution whose module globs match one of its
  // files (relative to site-packages), or null.
  const LoadedFirst* loaded_first(std::string_view distribution, std::string_view version, std::string_view relative) const;
  // The preload_calls row for that release of the distribution that loads this file (relative to
  // site-packages) when called, or null.
  const PreloadCall* preload_call(std::string_view distribution, std::string_view version, std::string_view relative) const;

  // The driver-table row of a toolkit: the newest release of the same major.minor at or below
  // it (12.4 -> 12.4 GA; 12.6.2 -> 12.6 Update 1/2), else that major.minor's first release (10.2 ->
  // 10.2.89, 11.0 -> 11.0.1). Null if the table has no such major.minor.
  const DriverRow* driver_row(const Version& toolkit) const;
  // The minor-version-compatibility floor of a CUDA major (11, 12, 13); null before 11.
  const MinorCompatRow* minor_compat(int major) const;
  // The newest toolkit release a driver meets the minimum of (its full driver), or null.
  const DriverRow* newest_toolkit_for_driver(const Version& driver, Platform platform) const;
  // The architecture row in force for a toolkit (the last row at or below it), or null.
  const ArchitectureRow* architectures_for(const Version& toolkit) const;
  // Releases with a version starting with `prefix` ("9.1" -> 9.1.0 and 9.1.1).
  std::vector<const CudnnRelease*> cudnn_releases_matching(const Version& prefix) const;
  // The newest cuDNN release and the newest toolkit the data has rows for (where the data ends).
  std::optional<Version> newest_cudnn_release() const;
  const DriverRow* newest_toolkit() const;
  // The data's name for a framework given by its own, PyPI or import name: torch -> pytorch.
  static std::string framework_name(std::string_view given);
  // Rows of a framework (any name framework_name takes) whose version starts with `version` (all if empty).
  std::vector<const FrameworkRow*> frameworks_matching(std::string_view framework,
                                                       std::string_view version) const;
  // The build an installed distribution (torch 2.9.1+cu128, tensorflow 2.20.0) was made with: the
  // first row with a CUDA and a cuDNN version, for its release, else its major.minor; with `cuda`,
  // only a row of that CUDA major.minor (torch's variants). Null when none.
  const FrameworkRow* framework_build(std::string_view distribution, std::string_view version,
                                      std::optional<std::pair<int, int>> cuda = std::nullopt) const;
  // A GPU by name ("H100", "NVIDIA GeForce RTX 4090"), sm number ("sm_90", "90") or
  // capability ("9.0"); for names the longest matching row name wins.
  std::optional<GpuMatch> gpu(std::string_view text) const;

  // The component a SONAME or file name belongs to: "libcudart.so.12" -> cudart. Null if none.
  const ComponentRow* component_of(std::string_view soname) const;
  // The component a Windows DLL belongs to, by its windows_prefix followed by digits and
  // underscores only, case ignored: "cudart64_13.dll" -> cudart, "nvcuda.dll" -> driver
  // ("nvcudart_hybrid64.dll" is none). Null if none.
  const ComponentRow* windows_component_of(std::string_view dll) const;
  // The SONAME row of a component library (libnvinfer.so.10 for libnvinfer.so.10.16.1), or nullptr.
  const ComponentSoname* soname_of(std::string_view soname) const;
  // The CUDA majors a component SONAME belongs to ("libcufft.so.11" -> {12}); empty if unknown.
  std::vector<int> cuda_majors_of(std::string_view soname) const;
  // The cuDNN series whose shim or sub-library this name is, or null.
  const CudnnSeries* cudnn_series_of(std::string_view soname) const;
  // The cuDNN series whose Windows DLL this is ("cudnn_ops64_9.dll", case ignored), or null.
  const CudnnSeries* windows_cudnn_series_of(std::string_view dll) const;
  const CudnnSeries* cudnn_series_for(int major) const;
  // The PyPI projects shipping a component, CUDA majors rising; only `cuda_majors` unless empty.
  std::vector<const PipPackage*> pip_packages_of(std::string_view component, const std::vector<int>& cuda_majors) const;
  // dlopen rows whose `from` matches the name.
  std::vector<const DlopenRow*> dlopen_rows_for(std::string_view soname) const;
  // Whether a row says `opener` copes without `name` (NCCL without NVML, ONNX Runtime without a provider).
  bool dlopen_is_optional(std::string_view opener, std::string_view name) const;
  // Whether an `opens` entry stands for `name`: the name itself (its {major}, {minor} and
  // {cuda_major} standing for numbers), or {soname:C} for a SONAME of component C.
  bool opens_names(std::string_view pattern, std::string_view name) const;

  // Replaces the sections a JSON document holds (see the file comment), validating them.
  // `origin` names the document in error messages.
  Expected<bool> load_document(std::string_view json_text, const std::string& origin);

 private:
  std::vector<DriverRow> drivers_;
  std::vector<MinorCompatRow> minor_compat_;
  std::vector<FullDriverFeature> full_driver_;
  std::vector<ArchitectureRow> architectures_;
  std::vector<CudnnRelease> cudnn_;
  std::string cudnn_compat_source_;
  std::vector<FrameworkRow> frameworks_;
  std::vector<GpuRow> gpus_;
  std::vector<ComponentRow> components_;
  std::vector<CudnnSeries> cudnn_series_;
  std::vector<DlopenRow> dlopen_;
  std::vector<PipPackage> pip_packages_;
  std::string pip_source_;
  std::vector<PythonVariants> python_variants_;
  std::vector<OptionalModule> optional_modules_;
  std::vector<PythonPreload> python_preloads_;
  std::vector<LoadedFirst> loaded_first_;
  std::vector<PreloadCall> preload_calls_;

  friend struct MatrixLoader;
  friend struct MatrixCodec;
};

// '*' matches any run of characters (including none); everything else matches itself.
bool glob_match(std::string_view pattern, std::string_view text);

// What the matrix is loaded for: a scan of files consults every section but frameworks.json (45%
// of the embedded data), which only `depscan matrix` and scans of installed distributions need.
enum class MatrixUse { Everything, Scan };

// The matrix compiled into the binary at build time (matrix/codec.h).
Expected<Matrix> load_embedded_matrix(MatrixUse use = MatrixUse::Everything);
// The same knowledge parsed and validated from the embedded matrix/data/*.json: what the build
// compiles, and what the tests hold the compiled matrix to.
Expected<Matrix> parse_embedded_matrix_json(MatrixUse use = MatrixUse::Everything);
// The embedded matrix with the sections of `path` replacing their embedded counterparts.
Expected<Matrix> load_matrix_file(const std::string& path, MatrixUse use = MatrixUse::Everything);

}  // namespace depscan
