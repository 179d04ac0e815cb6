#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

namespace spinrpc::fuzz {

/// A client's --callbacks list as one ",a,b," string, for the fuzz target's
/// hasCallback method: a membership scan over bytes the fuzzer chooses.
class CallbackList {
 public:
  explicit CallbackList(const std::vector<std::string>& names) : joined_(",") {
    for (const std::string& name : names) joined_ += name + ",";
  }

  /// Whether `name` is one of the names: ",name," occurs in the list.
  bool contains(std::string_view name) const noexcept {
    if (name.empty()) return false;
    const std::string_view list = joined_;
    for (std::size_t at = list.find(name); at != std::string_view::npos; at = list.find(name, at + 1)) {
      if (at > 0 && list[at - 1] == ',' && at + name.size() < list.size() && list[at + name.size()] == ',') {
        return true;
      }
    }
    return false;
  }

 private:
  std::string joined_;  // ",a,b,"
};

}  // namespace spinrpc::fuzz
