// The async fuzz targets' oracle: an independent JSON parser (nlohmann-json)
// judging what simdjson's side produced.
#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <nlohmann/json.hpp>

namespace spinrpc::fuzz {

// Valid JSON to nlohmann-json; a number beyond a double (1e400), which
// tsgo copies as written and nlohmann refuses (its error 406), counts as valid.
struct OverflowOnly : nlohmann::json_sax<nlohmann::json> {
  int error_id = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_id = e.id;
    return false;
  }
};

inline bool valid_json(std::string_view json) {
  if (nlohmann::json::accept(json)) return true;
  OverflowOnly sax;
  nlohmann::json::sax_parse(json, &sax);
  return sax.error_id == 406;
}

}  // namespace spinrpc::fuzz
