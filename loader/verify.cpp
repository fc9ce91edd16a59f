#include "loader/verify.h"
