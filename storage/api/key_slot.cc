#include "sluice/key_slot.h"

#include "encoding.h"

namespace sluice {

uint16_t KeyHashSlot(std::string_view key) { return internal::KeySlot(key); }

}  // namespace sluice
