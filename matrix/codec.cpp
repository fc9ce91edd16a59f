#include "matrix/codec.h"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

namespace depscan {
namespace {

constexpr std::string_view kMagic = "depscan-matrix-bin/8";

// Each row type's fields, in encoding order, for the writer and the reader alike.
template <class Row, class Type>
concept RowOf = std::same_as<std::remove_const_t<Row>, Type>;

template <class Io, RowOf<Version> Row>
void fields(Io& io, Row& r) { io(r.parts, r.spelled); }
template <class Io, RowOf<DriverRow> Row>
void fields(Io& io, Row& r) { io(r.toolkit, r.release, r.linux_driver, r.windows_driver, r.note, r.status, r.source); }
template <class Io, RowOf<MinorCompatRow> Row>
void fields(Io& io, Row& r) { io(r.major, r.branch, r.upper_branch, r.linux_driver, r.windows_driver, r.source); }
template <class Io, RowOf<FullDriverFeature> Row>
void fields(Io& io, Row& r) { io(r.feature, r.source); }
template <class Io, RowOf<ArchitectureRow> Row>
void fields(Io& io, Row& r) { io(r.toolkit, r.sm, r.note, r.source); }
template <class Io, RowOf<CudnnBuild> Row>
void fields(Io& io, Row& r) { io(r.cuda_min, r.cuda_max, r.linux_driver, r.windows_driver, r.sm_min, r.sm_max, r.note); }
template <class Io, RowOf<CudnnRelease> Row>
void fields(Io& io, Row& r) { io(r.versions, r.builds, r.sm_min, r.sm_max, r.note, r.status, r.source); }
template <class Io, RowOf<FrameworkRow> Row>
void fields(Io& io, Row& r) {
  io(r.framework, r.version, r.variant, r.cuda, r.cudnn, r.python, r.note, r.status, r.source);
}
template <class Io, RowOf<GpuRow> Row>
void fields(Io& io, Row& r) { io(r.names, r.cc, r.status, r.source); }
template <class Io, RowOf<ComponentSoname> Row>
void fields(Io& io, Row& r) { io(r.name, r.cuda_majors, r.pip_version); }
template <class Io, RowOf<ComponentRow> Row>
void fields(Io& io, Row& r) { io(r.component, r.prefix, r.windows_prefix, r.sonames, r.product, r.source); }
template <class Io, RowOf<CudnnSeries> Row>
void fields(Io& io, Row& r) {
  io(r.major, r.shim, r.sublibraries, r.optional_sublibraries, r.windows, r.header, r.version_factor, r.source);
}
template <class Io, RowOf<DlopenRow> Row>
void fields(Io& io, Row& r) { io(r.from, r.opens, r.probe, r.optional, r.unless_needed, r.also_strings, r.note, r.source); }
template <class Io, RowOf<PipPackage> Row>
void fields(Io& io, Row& r) { io(r.component, r.cuda_major, r.package); }
template <class Io, RowOf<PythonVariants> Row>
void fields(Io& io, Row& r) { io(r.distribution, r.since, r.before, r.cuda_file, r.cpu_file, r.others, r.rule, r.override_variable, r.source); }
template <class Io, RowOf<OptionalModule> Row>
void fields(Io& io, Row& r) { io(r.distribution, r.file, r.why, r.fix, r.source); }
template <class Io, RowOf<PythonPreload> Row>
void fields(Io& io, Row& r) { io(r.distribution, r.file, r.by, r.source); }
template <class Io, RowOf<LoadedFirstLibrary> Row>
void fields(Io& io, Row& r) { io(r.paths, r.global, r.distribution, r.min_version); }
template <class Io, RowOf<LoadedFirst> Row>
void fields(Io& io, Row& r) { io(r.distributions, r.since, r.before, r.modules, r.libraries, r.by, r.source); }
template <class Io, RowOf<PreloadCall> Row>
void fields(Io& io, Row& r) { io(r.distributions, r.since, r.before, r.call, r.when, r.paths, r.source); }

class Writer {
 public:
  template <class... T>
  void operator()(const T&... values) { (put(values), ...); }
  std::string take() { return std::move(out_); }
  size_t size() const { return out_.size(); }
  void patch_count(size_t at, size_t value) {
    auto v = static_cast<uint32_t>(value);
    std::memcpy(out_.data() + at, &v, sizeof v);
  }

  void put_count(size_t n) { put_raw(static_cast<uint32_t>(n)); }
  void put(int v) { put_raw(static_cast<int32_t>(v)); }
  void put(bool v) { put_raw(static_cast<uint8_t>(v)); }
  void put(RowStatus v) { put_raw(static_cast<uint8_t>(v)); }
  void put(const std::string& s) {
    put_count(s.size());
    out_ += s;
  }
  template <class T>
  void put(const std::optional<T>& v) {
    put(v.has_value());
    if (v) put(*v);
  }
  template <class T>
  void put(const std::vector<T>& items) {
    put_count(items.size());
    for (const T& item : items) put(item);
  }
  template <class Row>
    requires std::is_class_v<Row>
  void put(const Row& row) { fields(*this, row); }

 private:
  template <class T>
  void put_raw(T v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  std::string out_;
};

// Reads what Writer wrote. A short or inconsistent input sets failed() and yields empty values,
// never reads past the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class... T>
  void operator()(T&... values) { (get(values), ...); }
  bool failed() const { return failed_; }
  bool at_end() const { return in_.empty(); }
  std::string_view take(size_t n) {
    if (n > in_.size()) return fail(), std::string_view();
    std::string_view bytes = in_.substr(0, n);
    in_.remove_prefix(n);
    return bytes;
  }

  size_t get_count() {
    size_t n = get_raw<uint32_t>();
    if (n > in_.size()) fail();  // every element takes at least a byte
    return failed_ ? 0 : n;
  }
  void get(int& v) { v = get_raw<int32_t>(); }
  void get(bool& v) { v = get_raw<uint8_t>() != 0; }
  void get(RowStatus& v) { v = get_raw<uint8_t>() ? RowStatus::Secondary : RowStatus::Primary; }
  void get(std::string& s) { s = take(get_count()); }
  template <class T>
  void get(std::optional<T>& v) {
    bool present = false;
    get(present);
    if (!present) return v.reset();
    get(v.emplace());
  }
  template <class T>
  void get(std::vector<T>& items) {
    items.resize(get_count());
    for (T& item : items) get(item);
  }
  template <class Row>
    requires std::is_class_v<Row>
  void get(Row& row) { fields(*this, row); }

 private:
  void fail() {
    failed_ = true;
    in_ = {};
  }
  template <class T>
  T get_raw() {
    T v{};
    std::string_view bytes = take(sizeof v);
    if (bytes.size() == sizeof v) std::memcpy(&v, bytes.data(), sizeof v);
    return v;
  }
  std::string_view in_;
  bool failed_ = false;
};

}  // namespace

// Matrix's private sections, in encoding order. The framework rows come length-prefixed so a
// scan can step over them.
struct MatrixCodec {
  static std::string encode(const Matrix& m) {
    Writer w;
    w(m.drivers_, m.minor_compat_, m.full_driver_, m.architectures_, m.cudnn_, m.cudnn_compat_source_);
    size_t frameworks_length_at = w.size();
    w.put_count(0);
    size_t frameworks_start = w.size();
    w(m.frameworks_);
    w.patch_count(frameworks_length_at, w.size() - frameworks_start);
    w(m.gpus_, m.components_, m.cudnn_series_, m.dlopen_, m.pip_packages_, m.pip_source_, m.python_variants_,
      m.optional_modules_, m.python_preloads_, m.loaded_first_, m.preload_calls_);
    return std::string(kMagic) + w.take();
  }

  static Expected<Matrix> decode(std::string_view encoded, MatrixUse use) {
    if (!encoded.starts_with(kMagic)) return Error{"the compiled matrix is not in the expected format"};
    Reader r(encoded.substr(kMagic.size()));
    Matrix m;
    r(m.drivers_, m.minor_compat_, m.full_driver_, m.architectures_, m.cudnn_, m.cudnn_compat_source_);
    std::string_view frameworks = r.take(r.get_count());
    if (use == MatrixUse::Everything) {
      Reader framework_reader(frameworks);
      framework_reader(m.frameworks_);
      if (framework_reader.failed() || !framework_reader.at_end()) return Error{"the compiled matrix is truncated"};
    }
    r(m.gpus_, m.components_, m.cudnn_series_, m.dlopen_, m.pip_packages_, m.pip_source_, m.python_variants_,
      m.optional_modules_, m.python_preloads_, m.loaded_first_, m.preload_calls_);
    if (r.failed() || !r.at_end()) return Error{"the compiled matrix is truncated"};
    return m;
  }
};

std::string encode_matrix(const Matrix& matrix) { return MatrixCodec::encode(matrix); }

Expected<Matrix> decode_matrix(std::string_view encoded, MatrixUse use) { return MatrixCodec::decode(encoded, use); }

}  // namespace depscan
