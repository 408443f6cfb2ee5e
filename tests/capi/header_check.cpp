// Compiled as C++ with -Wall -Wextra -Werror -pedantic: the header must stay clean.
#include "tftrain.h"

int tft_header_check_cxx() { return TFT_OK + TFT_API_VERSION; }
