/* Compiled with -std=c99 -Wall -Wextra -Werror -pedantic: the header must stay clean. */
#include "tftrain.h"

int tft_header_check_c(void) { return TFT_OK + TFT_API_VERSION; }
