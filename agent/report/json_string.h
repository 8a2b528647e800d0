// JSON string values of a trace, read without simdjson's unescaping: a string without escapes
// is a view of the batch itself (a 500 MB name is not copied), and one with escapes is decoded
// here, where a lone UTF-16 surrogate (`\ud800` without its pair, as Python's json.dumps writes
// for such a str) becomes U+FFFD instead of making the whole trace unreadable.
#pragma once

#include <string>
#include <string_view>

namespace profagent::report {

// `token` is the raw JSON of one string value (from its opening quote; whitespace may follow
// the closing quote). On success `out` is its text: a view into `token` when it has no escape,
// else into `storage`. False with `error` on a bad escape.
bool decode_json_string(std::string_view token, std::string_view& out, std::string& storage, std::string& error);

}  // namespace profagent::report
