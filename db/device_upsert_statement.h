#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "tiletune/v1/records.pb.h"

namespace tiletune::db {

// Inserting or refreshing a devices row is the same statement on both
// engines. Its text, in SQLite's numbered placeholders (PostgreSQL gets it
// through PgPlaceholders), and its values in placeholder order stay side by
// side here, so a column cannot be added to one engine and not the other.
inline constexpr std::string_view kUpsertDeviceSql =
    "INSERT INTO devices (device_class, vendor, arch, name, compute_units, memory_bytes,"
    " l2_bytes, clock_mhz, driver_version, runtime_version, compiler_version,"
    " kernel_library_version, first_seen_us, last_seen_us)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)"
    " ON CONFLICT (device_class) DO UPDATE SET vendor = excluded.vendor,"
    " arch = excluded.arch, name = excluded.name, compute_units = excluded.compute_units,"
    " memory_bytes = excluded.memory_bytes, l2_bytes = excluded.l2_bytes,"
    " clock_mhz = excluded.clock_mhz, driver_version = excluded.driver_version,"
    " runtime_version = excluded.runtime_version,"
    " compiler_version = excluded.compiler_version,"
    " kernel_library_version = excluded.kernel_library_version,"
    " last_seen_us = excluded.last_seen_us";

// Calls bind(values...) with the values of kUpsertDeviceSql's placeholders.
template <typename Bind>
decltype(auto) WithUpsertDeviceValues(const v1::DeviceFingerprint& device,
                                      const v1::Toolchain& toolchain, int64_t now_us, Bind&& bind) {
  return std::forward<Bind>(bind)(device.device_class(), device.vendor(), device.arch(),
                                  device.name(), device.compute_units(), device.memory_bytes(),
                                  device.l2_bytes(), device.clock_mhz(), toolchain.driver_version(),
                                  toolchain.runtime_version(), toolchain.compiler_version(),
                                  toolchain.kernel_library_version(), now_us);
}

}  // namespace tiletune::db
