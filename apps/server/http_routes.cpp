#include "apps/server/http_routes.hpp"

#include <httplib.h>

#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "engine/model/model.hpp"
#include "apps/server/chat_page.hpp"
#include "apps/server/choice_reply.hpp"
#include "apps/server/client_watch.hpp"
#include "apps/server/openai_response.hpp"
#include "apps/server/request_prompt.hpp"
#include "apps/server/slot_scheduler.hpp"
#include "apps/server/template_kwargs.hpp"
#include "apps/server/tool_call_grammar.hpp"

namespace kiln {

namespace {

using nlohmann::json;

constexpr const char* kCompletionPaths[] = {"/v1/completions", "/completions"};
constexpr const char* kChatPaths[] = {"/v1/chat/completions", "/chat/completions"};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(json_text(body), "application/json; charset=utf-8");
}

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& param = "") {
  send_json(res, status, error_body(status, message, param));
}

// "data: <json>\n\n"; false when the client has gone.
bool send_event(httplib::DataSink& sink, const std::string& data) {
  const std::string event = "data: " + data + "\n\n";
  return sink.write(event.data(), event.size());
}

using Jobs = std::vector<std::shared_ptr<Job>>;

// The request's n choices, a job each, sampled on their own: with seeds
// seed, seed + 1, ... when the request gives one. They share the prompt's
// KV: whichever starts first computes it, the others copy it
// (CompletionRunner::seed).
Jobs choice_jobs(const CompletionRequest& request, const RequestPrompt& prompt) {
  Jobs jobs;
  for (int i = 0; i < request.n; ++i) {
    auto job = std::make_shared<Job>();
    job->request = request;
    job->prompt = prompt;
    if (request.sampling.seed != kRandomSeed) job->request.sampling.seed = request.sampling.seed + uint64_t(i);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

void cancel(const Jobs& jobs) {
  for (const auto& job : jobs) job->cancelled = true;
}

// Streams the jobs' events as server-sent events, one choice after the
// other (each chunk names its choice's index), ending with "data: [DONE]".
// Reasoning goes out as reasoning_content deltas; with tools, what may be a
// call is held back and sent as tool-call deltas when the choice ends.
// The first job's Started event has been read.
void stream(httplib::Response& res, const Jobs& jobs, const ResponseIds& ids, const ServerContext& ctx) {
  const Endpoint endpoint = jobs[0]->request.endpoint;
  const bool logprobs = jobs[0]->request.logprobs;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [jobs, ids, endpoint, logprobs, ctx = &ctx](size_t, httplib::DataSink& sink) {
        const auto gone = [&] {
          cancel(jobs);
          return false;
        };
        const auto send = [&](const ChunkChoice& c, const CompletionResult* usage = nullptr) {
          return send_event(sink, json_text(completion_chunk(endpoint, ids, c, usage)));
        };
        std::vector<CompletionResult> results;
        for (size_t i = 0; i < jobs.size(); ++i) {
          const int index = static_cast<int>(i);
          std::optional<CompletionEvent> error;
          if (i > 0)
            if (CompletionEvent first = jobs[i]->events.pop(); first.kind == CompletionEvent::Kind::Error) error = first;
          if (!error && endpoint == Endpoint::ChatCompletions && !send({index, "", "", nullptr, "", /*role_only=*/true}))
            return gone();
          ChoiceReply reply(*jobs[i], ctx->tool_format, ctx->reasoning);
          while (!error) {
            CompletionEvent e = jobs[i]->events.pop();
            if (e.kind == CompletionEvent::Kind::Error) {
              error = std::move(e);
            } else if (e.kind == CompletionEvent::Kind::Text) {
              const ReplyParts parts = reply.push(e.text);
              if ((!parts.content.empty() || !parts.reasoning.empty() || logprobs) &&
                  !send({index, parts.content, parts.reasoning, logprobs ? &e.scores : nullptr, "", false}))
                return gone();
            } else {
              const FinishedReply rest = reply.finish(e.result);
              if ((!rest.text.content.empty() || !rest.text.reasoning.empty()) &&
                  !send({index, rest.text.content, rest.text.reasoning, nullptr, "", false}))
                return gone();
              for (const json& chunk : tool_call_chunks(ids, index, rest.calls))
                if (!send_event(sink, json_text(chunk))) return gone();
              results.push_back(e.result);
              const bool last = i + 1 == jobs.size();
              const CompletionResult usage = last ? combined_usage(results) : CompletionResult{};
              if (!send({index, "", "", nullptr, e.result.finish_reason, false}, last ? &usage : nullptr)) return gone();
              break;
            }
          }
          if (error) {
            cancel(jobs);
            if (!send_event(sink, json_text(error_body(error->status, error->text)))) return gone();
            break;
          }
        }
        if (!send_event(sink, "[DONE]")) return gone();
        sink.done();
        return true;
      },
      [jobs](bool success) {
        if (!success) cancel(jobs);
      });
}

void complete(const ServerContext& ctx, const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
  Jobs jobs;
  try {
    CompletionRequest request = parse_completion_request(req.body, endpoint);
    apply_tool_grammar(request, ctx.tool_format);
    if (!request.reasoning_format) request.reasoning_format = ctx.reasoning_format;
    if (request.reasoning_budget < 0) request.reasoning_budget = ctx.reasoning_budget;
    if (!request.reasoning_budget_message) request.reasoning_budget_message = ctx.reasoning_budget_message;
    request.chat_template_kwargs = merged_template_kwargs(ctx.chat_template_kwargs, request.chat_template_kwargs);
    jobs = choice_jobs(request, request_prompt(ctx.model, ctx.chat_template, ctx.tool_format, ctx.reasoning, request));
  } catch (const RequestError& e) {
    return send_error(res, e.status, e.what(), e.param);
  }
  // A client that closes its connection cancels its request, waiting or generating.
  if (ClientWatch* client = current_client()) client->on_gone([jobs] { cancel(jobs); });
  for (const auto& job : jobs) ctx.scheduler.submit(job);
  // The first event says whether the prompt was accepted, before any header is sent.
  const CompletionEvent first = jobs[0]->events.pop();
  if (first.kind == CompletionEvent::Kind::Error) {
    cancel(jobs);
    return send_error(res, first.status, first.text);
  }
  const ResponseIds ids = new_response_ids(endpoint, ctx.model_id);
  if (jobs[0]->request.stream) return stream(res, jobs, ids, ctx);
  std::vector<ChoiceText> choices(jobs.size());
  std::vector<CompletionResult> results;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ChoiceReply reply(*jobs[i], ctx.tool_format, ctx.reasoning);
    for (bool started = i == 0;;) {
      CompletionEvent e = jobs[i]->events.pop();
      if (e.kind == CompletionEvent::Kind::Error) {
        cancel(jobs);
        return send_error(res, e.status, e.text);
      }
      if (!started) {
        started = true;
        continue;
      }
      if (e.kind == CompletionEvent::Kind::Done) {
        FinishedReply rest = reply.finish(e.result);
        choices[i].text += rest.text.content;
        choices[i].reasoning += rest.text.reasoning;
        choices[i].calls = std::move(rest.calls);
        choices[i].finish_reason = e.result.finish_reason;
        results.push_back(e.result);
        break;
      }
      const ReplyParts parts = reply.push(e.text);
      choices[i].text += parts.content;
      choices[i].reasoning += parts.reasoning;
      std::move(e.scores.begin(), e.scores.end(), std::back_inserter(choices[i].scores));
    }
  }
  send_json(res, 200, completion_body(endpoint, ids, choices, jobs[0]->request.logprobs, combined_usage(results)));
}

json health(const ServerContext& ctx) {
  const SlotCounts c = ctx.scheduler.counts();
  return {{"status", "ok"}, {"slots_idle", c.idle}, {"slots_processing", c.processing}, {"requests_waiting", c.waiting}};
}

json models(const ServerContext& ctx) {
  const json meta = {{"n_ctx", ctx.model.n_ctx()}, {"n_vocab", ctx.model.n_vocab()}, {"path", ctx.model.gguf_path()}};
  return {{"object", "list"},
          {"data", json::array({{{"id", ctx.model_id}, {"object", "model"}, {"created", 0}, {"owned_by", "kiln"},
                                  {"meta", meta}}})}};
}

json props(const ServerContext& ctx) {
  return {{"model_alias", ctx.model_id},
          {"model_path", ctx.model.gguf_path()},
          {"n_ctx", ctx.model.n_ctx()},
          {"total_slots", ctx.scheduler.counts().total},
          {"chat_template", ctx.template_name},
          {"tool_call_format", tool_call_format_name(ctx.tool_format)},
          {"reasoning_format", reasoning_format_name(ctx.reasoning_format)},
          {"reasoning_markers", ctx.reasoning.empty() ? json(nullptr) : json::array({ctx.reasoning.open, ctx.reasoning.close})},
          {"concurrency",
           "batched: every slot has a KV cache of its own, and each step computes the next token of every generating slot in one forward pass"}};
}

}  // namespace

bool key_accepted(const ServerContext& ctx, const RequestHead& head) {
  // The chat page asks for the key itself, and sends it with its requests.
  if (ctx.api_key.empty() || head.path == "/" || head.path == "/health" || head.path == "/v1/health") return true;
  const std::string* bearer = head.field("Authorization");
  const std::string* key = head.field("X-Api-Key");
  return (bearer && *bearer == "Bearer " + ctx.api_key) || (key && *key == ctx.api_key);
}

bool takes_body(const RequestHead& head) {
  if (head.method != "POST") return false;
  for (const auto* paths : {&kCompletionPaths, &kChatPaths})
    for (const char* path : *paths)
      if (head.path == path) return true;
  return false;
}

void add_routes(httplib::Server& server, const ServerContext& context) {
  const ServerContext* ctx = &context;  // outlives the server
  // Whatever ends in an error without a body of ours (an unknown path, a
  // malformed request) still answers in JSON.
  server.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string message =
        res.status == 404 ? "no such endpoint: " + req.method + " " + req.path : "HTTP status " + std::to_string(res.status);
    send_error(res, res.status, message);
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      message += std::string(": ") + x.what();
    } catch (...) {
    }
    send_error(res, 500, message);
  });

  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(chat_page()), "text/html; charset=utf-8");
  });
  for (const char* path : {"/health", "/v1/health"})
    server.Get(path, [ctx](const httplib::Request&, httplib::Response& res) { send_json(res, 200, health(*ctx)); });
  for (const char* path : {"/v1/models", "/models"})
    server.Get(path, [ctx](const httplib::Request&, httplib::Response& res) { send_json(res, 200, models(*ctx)); });
  server.Get("/props", [ctx](const httplib::Request&, httplib::Response& res) { send_json(res, 200, props(*ctx)); });
  if (ctx->metrics)
    server.Get("/metrics", [ctx](const httplib::Request&, httplib::Response& res) {
      res.set_content(ctx->metrics->prometheus_text(ctx->scheduler.counts()), "text/plain; version=0.0.4; charset=utf-8");
    });
  for (const char* path : kCompletionPaths)
    server.Post(path, [ctx](const httplib::Request& req, httplib::Response& res) {
      complete(*ctx, req, res, Endpoint::Completions);
    });
  for (const char* path : kChatPaths)
    server.Post(path, [ctx](const httplib::Request& req, httplib::Response& res) {
      complete(*ctx, req, res, Endpoint::ChatCompletions);
    });
}

}  // namespace kiln
