#include "engine/chat/chat_template.hpp"

#include "engine/chat/template_builtins.hpp"
#include "engine/chat/template_lexer.hpp"
#include "engine/chat/template_parser.hpp"
#include "engine/chat/template_render.hpp"

namespace kiln::chat {

const char* const kChatMlTemplate =
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

namespace {

Value range(const Args& a) {
  a.check("range", 3, {});
  if (a.positional.empty()) throw ValueError("range expected at least 1 argument, got 0");
  long long start = 0, stop = 0, step = 1;
  if (a.positional.size() == 1) {
    stop = int_arg(a.positional[0], "range");
  } else {
    start = int_arg(a.positional[0], "range");
    stop = int_arg(a.positional[1], "range");
    if (a.positional.size() == 3) step = int_arg(a.positional[2], "range");
  }
  if (step == 0) throw ValueError("range() arg 3 must not be zero");
  Array items;
  for (long long i = start; step > 0 ? i < stop : i > stop; i += step) {
    check_list_size(items.size() + 1);  // Jinja's sandbox refuses ranges this long, too
    items.emplace_back(static_cast<int64_t>(i));
  }
  return Value(std::move(items));
}

// namespace(...) and dict(...): an object from a dict argument and keyword arguments.
Value object_from(const Args& a, bool as_namespace) {
  auto obj = make_object();
  obj->is_namespace = as_namespace;
  if (a.positional.size() > 1) throw ValueError("expected at most 1 positional argument");
  if (!a.positional.empty()) {
    if (!a.positional[0].is_object()) throw ValueError("expected a mapping, got " + a.positional[0].type_name());
    obj->items = a.positional[0].as_object().items;
  }
  for (const auto& [k, v] : a.named) obj->set(k, v);
  if (as_namespace)
    for (const auto& [k, v] : obj->items) check_namespace_item(v);
  return Value(obj);
}

Value strftime_now(const std::tm& now, const Args& a) {
  a.check("strftime_now", 1, {});
  const std::string format = string_arg(require_arg(a, 0, "format", "strftime_now"), "strftime_now");
  char buf[512];
  const size_t n = format.empty() ? 0 : std::strftime(buf, sizeof buf, format.c_str(), &now);
  if (n == 0 && !format.empty()) throw ValueError("strftime_now: the format gives no text or more than 511 bytes");
  return Value(std::string(buf, n));
}

}  // namespace

ChatTemplate::ChatTemplate(std::string_view source, std::string name)
    : name_(std::move(name)), source_(source), body_(std::make_shared<const Body>(parse_template(lex_template(source, name_), name_))) {}

Text ChatTemplate::render(const ChatInputs& inputs) const {
  auto globals = make_object();
  if (inputs.extra)
    for (const auto& [k, v] : inputs.extra->items) globals->set(k, mark_user_content(v));
  globals->set("messages", mark_user_content(inputs.messages));
  globals->set("add_generation_prompt", Value(inputs.add_generation_prompt));
  globals->set("bos_token", Value(inputs.bos_token));
  globals->set("eos_token", Value(inputs.eos_token));
  globals->set("raise_exception", Value(Function([](const Args& a) -> Value {
    const Value* m = a.get(0, "message");
    throw ValueError("raise_exception: " + (m ? to_text(*m).str() : std::string()));
  })));
  const std::tm now = inputs.now;
  globals->set("strftime_now", Value(Function([now](const Args& a) { return strftime_now(now, a); })));
  globals->set("range", Value(Function(range)));
  globals->set("namespace", Value(Function([](const Args& a) { return object_from(a, true); })));
  globals->set("dict", Value(Function([](const Args& a) { return object_from(a, false); })));
  return render_template(*body_, name_, globals);
}

}  // namespace kiln::chat
