// A tensor's constant data (init.values), shared between copies of the graph. The passes, the
// prepared run and the printers copy graphs; a model's weights are hundreds of MB each (GPT-2's MLP
// at d 4096: 1 GB as doubles), and copying them with every graph made a dry-run take a minute.
// Reads see a const vector; a write (edit) copies the data first where another graph shares it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

namespace gexec {

class SharedValues {
 public:
  SharedValues() = default;
  SharedValues(std::vector<double> v) : data_(std::make_shared<std::vector<double>>(std::move(v))) {}  // NOLINT: a vector is its data
  SharedValues(std::initializer_list<double> v) : SharedValues(std::vector<double>(v)) {}

  const std::vector<double>& get() const { return data_ ? *data_ : empty_vector(); }
  operator const std::vector<double>&() const { return get(); }  // NOLINT: read as the vector it holds

  // The data to change: this copy's own (copied first if another shares it).
  std::vector<double>& edit() {
    if (!data_) data_ = std::make_shared<std::vector<double>>();
    else if (data_.use_count() > 1) data_ = std::make_shared<std::vector<double>>(*data_);
    return *data_;
  }

  // The data as a vector of its own: moved out where no other copy shares it, else copied.
  std::vector<double> take() && {
    if (!data_) return {};
    if (data_.use_count() == 1) return std::move(*data_);
    return *data_;
  }

  size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  const double* data() const { return get().data(); }
  const double& operator[](size_t i) const { return get()[i]; }
  const double& front() const { return get().front(); }
  const double& back() const { return get().back(); }
  std::vector<double>::const_iterator begin() const { return get().begin(); }
  std::vector<double>::const_iterator end() const { return get().end(); }
  friend bool operator==(const SharedValues& a, const std::vector<double>& b) { return a.get() == b; }
  // The same buffer (a copy not written since): equal without reading a value. The passes compare
  // the graph before and after each pass; a weight's hundreds of MB took 0.2 s a pass to compare.
  bool shares(const SharedValues& o) const { return data_ == o.data_; }

 private:
  static const std::vector<double>& empty_vector() {
    static const std::vector<double> none;
    return none;
  }
  std::shared_ptr<std::vector<double>> data_;
};

}  // namespace gexec
