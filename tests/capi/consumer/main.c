/* Links against an installed libtftrain and calls into it. Exit 0 on success. */
#include <stdio.h>
#include <string.h>

#include <tftrain.h>

int main(void) {
  tft_checkpoint_config* config = NULL;
  char summary[128];
  /* The installed tftrain_version.h and the installed library are the same version. */
  if (tft_api_version() != TFT_API_VERSION ||
      strcmp(tft_version_string(), TFTRAIN_VERSION_STRING) != 0) {
    fprintf(stderr, "header %s (%d), library %s (%d)\n", TFTRAIN_VERSION_STRING, TFT_API_VERSION,
            tft_version_string(), tft_api_version());
    return 1;
  }
  if (tft_checkpoint_config_create_uniform(2, &config) != TFT_OK) {
    fprintf(stderr, "create failed: %s\n", tft_last_error());
    return 1;
  }
  if (tft_checkpoint_config_get_summary(config, summary, sizeof summary, NULL) != TFT_OK) {
    return 1;
  }
  tft_checkpoint_config_free(config);
  printf("tftrain %s: %s\n", tft_version_string(), summary);
  return strcmp(summary, "Uniform checkpointing every 2 layers") == 0 ? 0 : 1;
}
