// Turns the command line's inputs into the roots the resolver loads: ELF/PE files as given,
// every binary under a directory (each its own root), wheels installed together into a private
// prefix (one install: their RUNPATHs reach each other), a site-packages directory or
// --python-env prefix with its distributions, a container image archive unpacked into a private
// root, or the whole --root tree when no input is given. Temporary directories live exactly as
// long as the CollectedInputs that owns them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/input/distribution.h"
#include "analyzer/input/file_owners.h"
#include "analyzer/input/file_source.h"
#include "analyzer/input/fs.h"
#include "analyzer/input/image.h"
#include "analyzer/input/safe_tree.h"
#include "analyzer/model.h"

namespace depscan {

struct CollectRequest {
  std::vector<std::string> inputs;
  bool rooted = false;                    // --root given: inputs are logical paths inside it
  std::optional<std::string> python_env;  // --python-env DIR
  ImageChoice image = {};                 // --image, --platform: the image taken from an image archive
  size_t max_walk_entries = 2'000'000;  // directory entries one directory input's walk reads at most
};

struct CollectedInputs {
  std::vector<std::string> roots;               // logical paths, in input order
  std::vector<Distribution> distributions;      // wheels given and environments found
  std::vector<Finding> findings;                // archive defects, skipped inputs, summaries
  std::vector<std::string> unreadable_inputs;   // inputs that could not be analysed at all
  std::vector<std::pair<std::string, std::string>> shown_as;  // logical prefix -> shown prefix
  size_t skipped_files = 0;                     // non-binaries met while walking directories
  bool install = false;                         // wheels / an environment: the rest is "system"
  bool image_input = false;                     // an input was taken as a container image archive
  std::optional<ImageEnvironment> image_environment;  // the unpacked image's loader settings and requirements
  std::string image_display;                    // the image input, as given
  std::vector<std::unique_ptr<TempDirectory>> temp_dirs;
  // Roots' files as telling them apart opened them, by logical path, for the reader to go on
  // with (the first kMaxOpenRoots roots; none when the file system was replaced).
  std::unordered_map<std::string, std::unique_ptr<FileSource>> open_roots;
};

inline constexpr size_t kMaxOpenRoots = 256;  // well under the usual limit of 1,024 descriptors

// A container image archive unpacked into a private directory, removed with it.
struct UnpackedImageRoot {
  std::unique_ptr<TempDirectory> dir;  // null when the archive could not be unpacked
  std::string rootfs;                  // host path of the image's root file system
  size_t layers = 0;                   // applied in full
  size_t layers_listed = 0;            // in the image's manifest
  ImageEnvironment environment;
  std::vector<Finding> findings;       // archive and image defects
  bool ok() const { return dir != nullptr; }
};
UnpackedImageRoot unpack_image_root(const std::string& host_path, const std::string& display, const ImageChoice& choice);

// The container's loader settings, for the image-unpacked line ("; its config sets ..."), naming
// the options that override them.
std::string loader_settings_note(const ImageEnvironment& env,
                                 std::string_view overrides = "--ld-library-path, --preload or --glibc-tunables");

// May replace `fs`: by a RootedFs on an unpacked image, or by a mount of the installed wheels.
CollectedInputs collect_inputs(std::unique_ptr<FileSystem>& fs, const CollectRequest& request);

// Object.owner for every object a distribution's RECORD lists (`owners`, built from
// inputs.distributions); with an install, "system" for the rest. Returns an info finding naming
// the libraries taken from the system.
std::vector<Finding> attribute_owners(Graph& graph, const CollectedInputs& inputs, const FileOwners& owners);

// Rewrites temporary paths into the installed locations the user knows ("site-packages/...").
void show_installed_paths(ScanResult& result, const CollectedInputs& inputs);

}  // namespace depscan
