// What Jinja does with values: attribute and item access (including the
// methods of str and dict that templates call), iteration, `in`, and the
// filters and tests. Errors are ValueError; the renderer adds the position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/chat/value.hpp"

namespace kiln::chat {

// obj.name: a method of str / dict, else the dict's key; Undefined if absent.
// Throws for attribute access on undefined.
Value get_attribute(const Value& obj, const std::string& name);
// obj[key]: list index (negative from the end), dict key, string character;
// Undefined if absent.
Value get_item(const Value& obj, const Value& key);
// obj[start:stop:step] of a list or string.
Value get_slice(const Value& obj, std::optional<long long> start, std::optional<long long> stop, long long step);
// The items a for loop visits: list items, dict keys, string characters;
// nothing for undefined.
std::vector<Value> iterate(const Value& v);
// `item in container`.
bool contains(const Value& container, const Value& item);

// `input | name(args)`. Throws ValueError naming an unknown filter.
Value apply_filter(const std::string& name, const Value& input, const Args& args);
// `input is name(args)`. Throws ValueError naming an unknown test.
bool apply_test(const std::string& name, const Value& input, const Args& args);

// Argument helpers shared by the builtins.
const Value& require_arg(const Args& args, size_t index, std::string_view name, std::string_view function);
std::string string_arg(const Value& v, std::string_view what);
long long int_arg(const Value& v, std::string_view what);

}  // namespace kiln::chat
