// The callback tables of one NVTX copy. NVTX 3 is header-only: every library that uses it
// carries its own copy, which at its first call loads the library named by
// NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2 (agent/nvtx_injection.cpp) with
// that copy's export table. The tool then writes its handlers into the copy's function slots
// (nvtxDetail/nvtxImpl.h, GetModuleFunctionTable); slots left empty stay no-ops.
#include "hooks/nvtx/nvtx_tables.h"

#include <cstring>
#include <new>
#include <string_view>

#include "hooks/nvtx/nvtx_events.h"

namespace profagent::hooks::nvtx {
namespace {

const Domain* domain_of(nvtxDomainHandle_t handle) noexcept { return reinterpret_cast<const Domain*>(handle); }

std::string_view text_of(const char* s) noexcept { return s != nullptr ? std::string_view(s) : std::string_view(); }

std::string_view text_of(const wchar_t* s, char* buffer, size_t room) noexcept {
  size_t n = 0;  // plain ASCII of a wide name (names are for people; others become '?')
  for (; s != nullptr && *s != 0 && n + 1 < room; ++s) buffer[n++] = *s < 0x80 ? char(*s) : '?';
  return std::string_view(buffer, n);
}

nvtxEventAttributes_t wide_message(const wchar_t* message) noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = message;
  return a;
}

// ---- core ----------------------------------------------------------------------------------
void MarkEx(const nvtxEventAttributes_t* a) noexcept { mark(nullptr, a); }
void MarkA(const char* m) noexcept { mark_text(text_of(m)); }
void MarkW(const wchar_t* m) noexcept {
  const nvtxEventAttributes_t a = wide_message(m);
  mark(nullptr, &a);
}
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* a) noexcept { return start(nullptr, a); }
nvtxRangeId_t RangeStartA(const char* m) noexcept { return start_text(text_of(m)); }
nvtxRangeId_t RangeStartW(const wchar_t* m) noexcept {
  const nvtxEventAttributes_t a = wide_message(m);
  return start(nullptr, &a);
}
void RangeEnd(nvtxRangeId_t id) noexcept { end(id); }
int RangePushEx(const nvtxEventAttributes_t* a) noexcept { return push(nullptr, a); }
int RangePushA(const char* m) noexcept { return push_text(text_of(m)); }
int RangePushW(const wchar_t* m) noexcept {
  const nvtxEventAttributes_t a = wide_message(m);
  return push(nullptr, &a);
}
int RangePop() noexcept { return pop(nullptr); }
void NameCategoryA(uint32_t category, const char* name) noexcept {
  collector::name_category(kNoName, category, text_of(name));
}
void NameCategoryW(uint32_t category, const wchar_t* name) noexcept {
  char buffer[128];
  collector::name_category(kNoName, category, text_of(name, buffer, sizeof buffer));
}
void NameOsThreadA(uint32_t tid, const char* name) noexcept { collector::name_os_thread(tid, text_of(name)); }
void NameOsThreadW(uint32_t tid, const wchar_t* name) noexcept {
  char buffer[128];
  collector::name_os_thread(tid, text_of(name, buffer, sizeof buffer));
}

// ---- core2: domains ------------------------------------------------------------------------
void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept { mark(domain_of(d), a); }
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  return start(domain_of(d), a);
}
void DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept { end(id); }
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept { return push(domain_of(d), a); }
int DomainRangePop(nvtxDomainHandle_t d) noexcept { return pop(domain_of(d)); }
void DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) noexcept {
  collector::name_category(d != nullptr ? domain_of(d)->name : kNoName, category, text_of(name));
}
void DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) noexcept {
  char buffer[128];
  collector::name_category(d != nullptr ? domain_of(d)->name : kNoName, category, text_of(name, buffer, sizeof buffer));
}

nvtxStringHandle_t register_string(std::string_view text) noexcept {
  auto* s = new (std::nothrow) RegisteredString;
  char* copy = new (std::nothrow) char[text.size() + 1];
  if (s == nullptr || copy == nullptr) return nullptr;  // NVTX treats a null handle as "no string"
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  s->name = collector::intern(text);
  s->text = std::string_view(copy, text.size());
  return reinterpret_cast<nvtxStringHandle_t>(s);
}
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t, const char* text) noexcept {
  return register_string(text_of(text));
}
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) noexcept {
  char buffer[256];
  return register_string(text_of(text, buffer, sizeof buffer));
}

nvtxDomainHandle_t create_domain(std::string_view name) noexcept {
  auto* d = new (std::nothrow) Domain;
  if (d == nullptr) return nullptr;
  d->name = collector::intern(name);
  const size_t n = std::min(name.size(), sizeof d->text - 1);
  std::memcpy(d->text, name.data(), n);
  return reinterpret_cast<nvtxDomainHandle_t>(d);
}
nvtxDomainHandle_t DomainCreateA(const char* name) noexcept { return create_domain(text_of(name)); }
nvtxDomainHandle_t DomainCreateW(const wchar_t* name) noexcept {
  char buffer[64];
  return create_domain(text_of(name, buffer, sizeof buffer));
}
void DomainDestroy(nvtxDomainHandle_t) noexcept {}  // kept: its ranges may still be in a window
void Initialize(const void*) noexcept {}

// ---- CUDA naming (runtime and driver handles are the same pointers) -----------------------
void NameStreamA(void* stream, const char* name) noexcept {
  collector::name_stream(reinterpret_cast<uintptr_t>(stream), text_of(name));
}
void NameStreamW(void* stream, const wchar_t* name) noexcept {
  char buffer[128];
  collector::name_stream(reinterpret_cast<uintptr_t>(stream), text_of(name, buffer, sizeof buffer));
}

template <typename F>
NvtxFunctionPointer slot(F f) noexcept { return reinterpret_cast<NvtxFunctionPointer>(f); }

// What we fill, per module: {callback id, handler}. Ids outside the copy's table are skipped
// (an older NVTX has fewer slots).
struct Entry {
  unsigned id;
  NvtxFunctionPointer handler;
};

const Entry kCore[] = {
    {NVTX_CBID_CORE_MarkEx, slot(MarkEx)}, {NVTX_CBID_CORE_MarkA, slot(MarkA)},
    {NVTX_CBID_CORE_MarkW, slot(MarkW)}, {NVTX_CBID_CORE_RangeStartEx, slot(RangeStartEx)},
    {NVTX_CBID_CORE_RangeStartA, slot(RangeStartA)}, {NVTX_CBID_CORE_RangeStartW, slot(RangeStartW)},
    {NVTX_CBID_CORE_RangeEnd, slot(RangeEnd)}, {NVTX_CBID_CORE_RangePushEx, slot(RangePushEx)},
    {NVTX_CBID_CORE_RangePushA, slot(RangePushA)}, {NVTX_CBID_CORE_RangePushW, slot(RangePushW)},
    {NVTX_CBID_CORE_RangePop, slot(RangePop)}, {NVTX_CBID_CORE_NameCategoryA, slot(NameCategoryA)},
    {NVTX_CBID_CORE_NameCategoryW, slot(NameCategoryW)}, {NVTX_CBID_CORE_NameOsThreadA, slot(NameOsThreadA)},
    {NVTX_CBID_CORE_NameOsThreadW, slot(NameOsThreadW)},
};
const Entry kCore2[] = {
    {NVTX_CBID_CORE2_DomainMarkEx, slot(DomainMarkEx)},
    {NVTX_CBID_CORE2_DomainRangeStartEx, slot(DomainRangeStartEx)},
    {NVTX_CBID_CORE2_DomainRangeEnd, slot(DomainRangeEnd)},
    {NVTX_CBID_CORE2_DomainRangePushEx, slot(DomainRangePushEx)},
    {NVTX_CBID_CORE2_DomainRangePop, slot(DomainRangePop)},
    {NVTX_CBID_CORE2_DomainNameCategoryA, slot(DomainNameCategoryA)},
    {NVTX_CBID_CORE2_DomainNameCategoryW, slot(DomainNameCategoryW)},
    {NVTX_CBID_CORE2_DomainRegisterStringA, slot(DomainRegisterStringA)},
    {NVTX_CBID_CORE2_DomainRegisterStringW, slot(DomainRegisterStringW)},
    {NVTX_CBID_CORE2_DomainCreateA, slot(DomainCreateA)}, {NVTX_CBID_CORE2_DomainCreateW, slot(DomainCreateW)},
    {NVTX_CBID_CORE2_DomainDestroy, slot(DomainDestroy)}, {NVTX_CBID_CORE2_Initialize, slot(Initialize)},
};
const Entry kCudaRt[] = {
    {NVTX_CBID_CUDART_NameCudaStreamA, slot(NameStreamA)}, {NVTX_CBID_CUDART_NameCudaStreamW, slot(NameStreamW)},
};
const Entry kCuda[] = {
    {NVTX_CBID_CUDA_NameCuStreamA, slot(NameStreamA)}, {NVTX_CBID_CUDA_NameCuStreamW, slot(NameStreamW)},
};

template <size_t N>
bool fill(const NvtxExportTableCallbacks& callbacks, NvtxCallbackModule module, const Entry (&entries)[N]) noexcept {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks.GetModuleFunctionTable == nullptr || !callbacks.GetModuleFunctionTable(module, &table, &size) ||
      table == nullptr) {
    return false;
  }
  for (const Entry& e : entries) {
    if (e.id < size && table[e.id] != nullptr) *table[e.id] = e.handler;
  }
  return true;
}

}  // namespace

bool attach(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (get_export_table == nullptr) return false;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return false;
  if (const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
      version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  if (!fill(*callbacks, NVTX_CB_MODULE_CORE, kCore)) return false;
  fill(*callbacks, NVTX_CB_MODULE_CORE2, kCore2);
  fill(*callbacks, NVTX_CB_MODULE_CUDART, kCudaRt);
  fill(*callbacks, NVTX_CB_MODULE_CUDA, kCuda);
  return true;
}

}  // namespace profagent::hooks::nvtx
