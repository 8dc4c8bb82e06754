/* Greedy text generation through kiln.h, in plain C: what the model's
 * command-line program prints for `-p PROMPT -n N --temp 0`, byte for byte.
 *
 *   generate [-m model.gguf] [-t threads] -p PROMPT [-n N]
 *
 * Build against any compiled model's library: cc generate.c -I<kiln>/capi -l<name>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln.h"

/* The tokens of the text so far: the prompt, then each generated token. */
typedef struct {
  int32_t* ids;
  int32_t n, capacity;
} token_list;

static int push_token(token_list* list, int32_t id) {
  if (list->n == list->capacity) {
    const int32_t capacity = list->capacity ? 2 * list->capacity : 256;
    int32_t* grown = realloc(list->ids, (size_t)capacity * sizeof *grown);
    if (!grown) return 0;
    list->ids = grown;
    list->capacity = capacity;
  }
  list->ids[list->n++] = id;
  return 1;
}

/* kiln_generate's callback: keeps every token (0 stops, if memory ran out). */
static int on_token(void* user_data, int32_t token, const char* piece, size_t piece_len) {
  (void)piece;
  (void)piece_len;
  return push_token((token_list*)user_data, token);
}

int main(int argc, char** argv) {
  const char* gguf = NULL;
  const char* prompt = NULL;
  int n_predict = -1, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-m")) gguf = argv[i + 1];
    else if (!strcmp(argv[i], "-p")) prompt = argv[i + 1];
    else if (!strcmp(argv[i], "-n")) n_predict = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "generate: unknown flag %s\n", argv[i]);
      return 1;
    }
  }
  if (!prompt || argc % 2 == 0) {
    fprintf(stderr, "usage: generate [-m model.gguf] [-t threads] -p PROMPT [-n N]\n");
    return 1;
  }

  kiln_model* model = kiln_model_load(gguf); /* NULL: the GGUF the library was compiled from */
  if (!model) {
    fprintf(stderr, "generate: %s\n", kiln_last_error());
    return 1;
  }
  kiln_sampling greedy = kiln_sampling_default();
  greedy.temperature = 0;
  kiln_session* session = kiln_session_new(model, &greedy, threads);
  token_list text = {NULL, 0, 0};
  char* out = NULL;
  int status = 1;
  if (!session) goto done;

  /* As the command-line program reads a prompt: BOS added, special tokens parsed. */
  const int32_t n_prompt = kiln_tokenize(model, prompt, strlen(prompt), 1, 1, NULL, 0);
  if (n_prompt < 0) goto done;
  text.capacity = n_prompt > 0 ? n_prompt : 1;
  text.ids = malloc((size_t)text.capacity * sizeof *text.ids);
  if (!text.ids || kiln_tokenize(model, prompt, strlen(prompt), 1, 1, text.ids, text.capacity) != n_prompt) goto done;
  text.n = n_prompt;

  if (kiln_generate(session, text.ids, text.n, n_predict, on_token, &text) < 0) goto done;
  const int64_t length = kiln_detokenize(model, text.ids, text.n, NULL, 0);
  if (length < 0) goto done;
  out = malloc((size_t)length + 1);
  if (!out || kiln_detokenize(model, text.ids, text.n, out, (size_t)length + 1) != length) goto done;
  fwrite(out, 1, (size_t)length, stdout);
  fputc('\n', stdout);
  status = 0;
done:
  if (status) fprintf(stderr, "generate: %s\n", kiln_last_error());
  free(out);
  free(text.ids);
  kiln_session_free(session);
  kiln_model_free(model);
  return status;
}
