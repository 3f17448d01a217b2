#include <libnfc/nfc.h>
