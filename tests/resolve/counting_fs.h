// A file system that forwards to another and counts what it was asked: tests bound the work a
// resolution does by these counts instead of by the time it took.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/input/file_source.h"

namespace depscan::test {

class CountingFs final : public FileSystem {
 public:
  explicit CountingFs(std::unique_ptr<FileSystem> inner = make_real_fs()) : inner_(std::move(inner)) {}
  Expected<std::string> canonical(std::string_view p) const override {
    ++canonicals;
    return inner_->canonical(p);
  }
  Expected<FileInfo> stat(std::string_view p) const override {
    ++stats;
    return inner_->stat(p);
  }
  Expected<std::string> host_path(std::string_view p) const override { return inner_->host_path(p); }
  std::vector<std::string> list(std::string_view dir) const override {
    ++listings;
    return inner_->list(dir);
  }
  const std::string& root() const override { return inner_->root(); }
  Expected<std::string> read_head(std::string_view p, size_t bytes) const override {
    ++head_reads;
    return inner_->read_head(p, bytes);
  }
  Expected<std::unique_ptr<FileSource>> open(std::string_view p) const override {
    ++opens;
    return inner_->open(p);
  }

  // Every question that touches the file system: what a path search costs.
  long probes() const { return canonicals + stats + listings + head_reads; }

  mutable std::atomic<long> canonicals = 0, stats = 0, listings = 0, head_reads = 0, opens = 0;

 private:
  std::unique_ptr<FileSystem> inner_;
};

}  // namespace depscan::test
