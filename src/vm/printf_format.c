/* Host-side formatter for device printf (`vprintf`).
 *
 * Walks a printf format string, decodes each argument from the device
 * argument buffer by the layout rules of PTX-SEMANTICS.md section 10
 * (promoted types at natural alignment, 8-byte pointers for %s and %p) and
 * formats it with the host snprintf through a rebuilt single-specifier
 * format, which is how the CUDA runtime itself does it. Strings for %s are
 * fetched through a caller callback, so this file never touches emulated
 * memory directly. It must not print anywhere or stop the process: bad
 * formats and short buffers degrade to printing the specifier as written.
 */
#include "vm/printf_format.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The growable output text, owned by the caller. */
typedef struct {
    char **text;
    size_t *length;
    size_t *capacity;
} printf_output;

/* The first thing that could not be printed as the kernel meant, for the
 * caller's note (NULL text: nobody asked). */
typedef struct {
    char *text;
    size_t capacity;
} printf_problem;

static void note_problem(printf_problem *problem, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void note_problem(printf_problem *problem, const char *format, ...)
{
    if (problem == NULL || problem->text == NULL || problem->capacity == 0 || problem->text[0] != '\0')
        return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(problem->text, problem->capacity, format, ap);
    va_end(ap);
}

/* The specifier text as written, printable (other bytes as \xNN). */
static void spec_as_written(char *text, size_t capacity, const char *start, size_t length)
{
    size_t n = 0;
    for (size_t i = 0; i < length && n + 5 < capacity; i++) {
        unsigned char c = (unsigned char)start[i];
        if (c >= 0x20 && c < 0x7f)
            text[n++] = (char)c;
        else
            n += (size_t)snprintf(text + n, capacity - n, "\\x%02x", c);
    }
    if (length > 0 && n + 5 >= capacity && n + 4 < capacity)
        n += (size_t)snprintf(text + n, capacity - n, "...");
    text[n < capacity ? n : capacity - 1] = '\0';
}

/* Walks the argument buffer in order; once an argument is missing or the
 * argument limit is hit, every later argument counts as missing too. */
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    int taken;
    bool exhausted;
} printf_arguments;

enum {
    FLAG_MINUS = 1u << 0,
    FLAG_PLUS = 1u << 1,
    FLAG_SPACE = 1u << 2,
    FLAG_HASH = 1u << 3,
    FLAG_ZERO = 1u << 4,
};

typedef enum {
    LENGTH_NONE,
    LENGTH_CHAR,      /* hh */
    LENGTH_SHORT,     /* h */
    LENGTH_64BIT,     /* l ll q j z Z t */
    LENGTH_LONG_DOUBLE /* L */
} printf_length;

/* One parsed conversion specification. */
typedef struct {
    unsigned flags;
    bool width_given;
    bool width_from_argument;
    long width;
    bool precision_given;
    bool precision_from_argument;
    long precision;
    printf_length length;
    char conversion; /* '\0' when the format ended inside the specifier */
} printf_spec;

typedef enum {
    VALUE_INT,      /* 4-byte signed, printed through int */
    VALUE_UNSIGNED, /* 4-byte unsigned */
    VALUE_LONG_LONG,
    VALUE_UNSIGNED_LONG_LONG,
    VALUE_DOUBLE,
    VALUE_POINTER,
    VALUE_STRING,
} printf_value_kind;

typedef struct {
    printf_value_kind kind;
    union {
        int as_int;
        unsigned as_unsigned;
        long long as_long_long;
        unsigned long long as_unsigned_long_long;
        double as_double;
        void *as_pointer;
        const char *as_string;
    } u;
} printf_value;

static const char null_string_text[] = "(null)";

/* Makes room for `extra` more bytes plus the terminating NUL. */
static int output_reserve(printf_output *out, size_t extra)
{
    size_t needed = *out->length + extra + 1;
    if (needed <= *out->capacity && *out->text != NULL)
        return 0;
    size_t new_capacity = *out->capacity < 64 ? 64 : *out->capacity;
    while (new_capacity < needed)
        new_capacity *= 2;
    char *grown = realloc(*out->text, new_capacity);
    if (grown == NULL)
        return -1;
    *out->text = grown;
    *out->capacity = new_capacity;
    return 0;
}

static int output_append(printf_output *out, const char *bytes, size_t count)
{
    if (output_reserve(out, count) != 0)
        return -1;
    memcpy(*out->text + *out->length, bytes, count);
    *out->length += count;
    (*out->text)[*out->length] = '\0';
    return 0;
}

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
/* snprintf with one rebuilt specifier and one typed value. */
static int format_value(char *destination, size_t room, const char *spec_text,
                        const printf_value *value)
{
    switch (value->kind) {
    case VALUE_INT:
        return snprintf(destination, room, spec_text, value->u.as_int);
    case VALUE_UNSIGNED:
        return snprintf(destination, room, spec_text, value->u.as_unsigned);
    case VALUE_LONG_LONG:
        return snprintf(destination, room, spec_text, value->u.as_long_long);
    case VALUE_UNSIGNED_LONG_LONG:
        return snprintf(destination, room, spec_text, value->u.as_unsigned_long_long);
    case VALUE_DOUBLE:
        return snprintf(destination, room, spec_text, value->u.as_double);
    case VALUE_POINTER:
        return snprintf(destination, room, spec_text, value->u.as_pointer);
    case VALUE_STRING:
        return snprintf(destination, room, spec_text, value->u.as_string);
    }
    return -1;
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* Formats one value straight into the output buffer. */
static int output_format(printf_output *out, const char *spec_text, const printf_value *value)
{
    if (output_reserve(out, 63) != 0)
        return -1;
    size_t room = *out->capacity - *out->length;
    int written = format_value(*out->text + *out->length, room, spec_text, value);
    if (written < 0)
        return -1;
    if ((size_t)written >= room) {
        if (output_reserve(out, (size_t)written) != 0)
            return -1;
        room = *out->capacity - *out->length;
        written = format_value(*out->text + *out->length, room, spec_text, value);
        if (written < 0 || (size_t)written >= room)
            return -1;
    }
    *out->length += (size_t)written;
    return 0;
}

/* Parses decimal digits, clamping the value to VM_PRINTF_MAX_FIELD. */
static const char *parse_number(const char *cursor, long *value)
{
    long result = 0;
    while (*cursor >= '0' && *cursor <= '9') {
        if (result < VM_PRINTF_MAX_FIELD)
            result = result * 10 + (*cursor - '0');
        cursor++;
    }
    *value = result > VM_PRINTF_MAX_FIELD ? VM_PRINTF_MAX_FIELD : result;
    return cursor;
}

/* Parses the specifier that follows a '%'; returns the first byte after it
 * (after the conversion character, or at the terminating NUL). */
static const char *parse_spec(const char *cursor, printf_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    for (;; cursor++) {
        unsigned flag = 0;
        switch (*cursor) {
        case '-': flag = FLAG_MINUS; break;
        case '+': flag = FLAG_PLUS; break;
        case ' ': flag = FLAG_SPACE; break;
        case '#': flag = FLAG_HASH; break;
        case '0': flag = FLAG_ZERO; break;
        default: break;
        }
        if (flag == 0)
            break;
        spec->flags |= flag;
    }
    if (*cursor == '*') {
        spec->width_given = true;
        spec->width_from_argument = true;
        cursor++;
    } else if (*cursor >= '1' && *cursor <= '9') {
        spec->width_given = true;
        cursor = parse_number(cursor, &spec->width);
    }
    if (*cursor == '.') {
        spec->precision_given = true;
        cursor++;
        if (*cursor == '*') {
            spec->precision_from_argument = true;
            cursor++;
        } else {
            cursor = parse_number(cursor, &spec->precision);
        }
    }
    switch (*cursor) {
    case 'h':
        cursor++;
        spec->length = LENGTH_SHORT;
        if (*cursor == 'h') {
            cursor++;
            spec->length = LENGTH_CHAR;
        }
        break;
    case 'l':
        cursor++;
        spec->length = LENGTH_64BIT;
        if (*cursor == 'l')
            cursor++;
        break;
    case 'q': case 'j': case 'z': case 'Z': case 't':
        cursor++;
        spec->length = LENGTH_64BIT;
        break;
    case 'L':
        cursor++;
        spec->length = LENGTH_LONG_DOUBLE;
        break;
    default:
        break;
    }
    spec->conversion = *cursor;
    if (*cursor != '\0')
        cursor++;
    return cursor;
}

static bool is_integer_conversion(char conversion)
{
    return conversion != '\0' && strchr("diouxX", conversion) != NULL;
}

static bool is_float_conversion(char conversion)
{
    return conversion != '\0' && strchr("fFeEgGaA", conversion) != NULL;
}

/* Size of the value slot a conversion takes from the buffer, 0 for none,
 * -1 for a conversion this formatter does not know. */
static int value_slot_size(const printf_spec *spec)
{
    if (is_integer_conversion(spec->conversion))
        return (spec->length == LENGTH_64BIT || spec->length == LENGTH_LONG_DOUBLE) ? 8 : 4;
    if (is_float_conversion(spec->conversion))
        return 8;
    switch (spec->conversion) {
    case 'c': return 4;
    case 's': case 'p': case 'n': return 8;
    case '%': return 0;
    default: return -1;
    }
}

static size_t align_up(size_t offset, size_t alignment)
{
    return (offset + alignment - 1) / alignment * alignment;
}

/* Reserves the slots a specifier needs (sizes in `slot_sizes`), all or
 * nothing, and fills their offsets. Returns false when any slot is missing
 * or the argument limit would be passed; then the walk is exhausted. */
static bool arguments_reserve(printf_arguments *arguments, const int *slot_sizes,
                              int slot_count, size_t *offsets)
{
    if (arguments->exhausted)
        return false;
    if (arguments->taken + slot_count > VM_PRINTF_MAX_ARGS) {
        arguments->exhausted = true;
        return false;
    }
    size_t offset = arguments->offset;
    for (int slot = 0; slot < slot_count; slot++) {
        size_t size = (size_t)slot_sizes[slot];
        offset = align_up(offset, size);
        if (offset > arguments->size || size > arguments->size - offset) {
            arguments->exhausted = true;
            return false;
        }
        offsets[slot] = offset;
        offset += size;
    }
    arguments->offset = offset;
    arguments->taken += slot_count;
    return true;
}

/* Little-endian read of a 4- or 8-byte slot (the device is little-endian). */
static uint64_t arguments_read(const printf_arguments *arguments, size_t offset, int size)
{
    uint64_t value = 0;
    for (int byte = size - 1; byte >= 0; byte--)
        value = (value << 8) | arguments->data[offset + (size_t)byte];
    return value;
}

/* Rebuilds a single-specifier format for the host snprintf. `length_text`
 * is the length modifier to use and `conversion` the conversion letter. */
static void build_spec_text(char *text, size_t capacity, const printf_spec *spec,
                            const char *length_text, char conversion)
{
    char flags[8];
    size_t flag_count = 0;
    if (spec->flags & FLAG_MINUS) flags[flag_count++] = '-';
    if (spec->flags & FLAG_PLUS) flags[flag_count++] = '+';
    if (spec->flags & FLAG_SPACE) flags[flag_count++] = ' ';
    if (spec->flags & FLAG_HASH) flags[flag_count++] = '#';
    if (spec->flags & FLAG_ZERO) flags[flag_count++] = '0';
    flags[flag_count] = '\0';

    char width[24] = "";
    if (spec->width_given)
        snprintf(width, sizeof(width), "%ld", spec->width);
    char precision[24] = "";
    if (spec->precision_given)
        snprintf(precision, sizeof(precision), ".%ld", spec->precision);
    snprintf(text, capacity, "%%%s%s%s%s%c", flags, width, precision, length_text, conversion);
}

/* Applies a `*` width value: negative means left-justify. */
static void apply_width_argument(printf_spec *spec, int32_t value)
{
    int64_t width = value;
    if (width < 0) {
        spec->flags |= FLAG_MINUS;
        width = -width;
    }
    spec->width = width > VM_PRINTF_MAX_FIELD ? VM_PRINTF_MAX_FIELD : (long)width;
}

/* Applies a `.*` precision value: negative means no precision. */
static void apply_precision_argument(printf_spec *spec, int32_t value)
{
    if (value < 0) {
        spec->precision_given = false;
        spec->precision = 0;
        return;
    }
    spec->precision = value > VM_PRINTF_MAX_FIELD ? VM_PRINTF_MAX_FIELD : value;
}

/* Reads the device string at `address` into a fresh heap buffer, growing it
 * while the string fills it (up to VM_PRINTF_MAX_FIELD characters, or the
 * precision when one is given). Sets *text to NULL for an unreadable string;
 * returns -1 only when memory runs out. */
static int read_device_string(vm_printf_read_string read_string, void *context,
                              uint64_t address, const printf_spec *spec, char **text)
{
    *text = NULL;
    if (address == 0 || read_string == NULL)
        return 0;
    size_t limit = VM_PRINTF_MAX_FIELD;
    if (spec->precision_given && (size_t)spec->precision < limit)
        limit = (size_t)spec->precision;
    size_t capacity = limit < 255 ? limit + 1 : 256;
    for (;;) {
        char *buffer = malloc(capacity);
        if (buffer == NULL)
            return -1;
        buffer[0] = '\0';
        if (read_string(context, address, buffer, capacity) != 0) {
            free(buffer);
            return 0;
        }
        buffer[capacity - 1] = '\0';
        size_t length = strlen(buffer);
        if (length < capacity - 1 || capacity - 1 >= limit) {
            *text = buffer;
            return 0;
        }
        free(buffer);
        capacity = (capacity - 1) * 4 + 1;
        if (capacity - 1 > limit)
            capacity = limit + 1;
    }
}

/* Formats one specifier whose slots were reserved at `offsets`. */
static int format_spec(printf_output *out, const printf_arguments *arguments,
                       const printf_spec *spec, const size_t *value_offset,
                       vm_printf_read_string read_string, void *context, printf_problem *problem)
{
    char spec_text[96];
    printf_value value;
    char conversion = spec->conversion;

    if (is_integer_conversion(conversion)) {
        bool is_signed = conversion == 'd' || conversion == 'i';
        if (spec->length == LENGTH_64BIT || spec->length == LENGTH_LONG_DOUBLE) {
            uint64_t bits = arguments_read(arguments, *value_offset, 8);
            if (is_signed) {
                value.kind = VALUE_LONG_LONG;
                value.u.as_long_long = (long long)(int64_t)bits;
            } else {
                value.kind = VALUE_UNSIGNED_LONG_LONG;
                value.u.as_unsigned_long_long = (unsigned long long)bits;
            }
            build_spec_text(spec_text, sizeof(spec_text), spec, "ll", conversion);
        } else {
            uint32_t bits = (uint32_t)arguments_read(arguments, *value_offset, 4);
            if (is_signed) {
                value.kind = VALUE_INT;
                value.u.as_int = (int)(int32_t)bits;
            } else {
                value.kind = VALUE_UNSIGNED;
                value.u.as_unsigned = (unsigned)bits;
            }
            const char *length_text = spec->length == LENGTH_CHAR ? "hh"
                                      : spec->length == LENGTH_SHORT ? "h" : "";
            build_spec_text(spec_text, sizeof(spec_text), spec, length_text, conversion);
        }
        return output_format(out, spec_text, &value);
    }
    if (is_float_conversion(conversion)) {
        uint64_t bits = arguments_read(arguments, *value_offset, 8);
        value.kind = VALUE_DOUBLE;
        memcpy(&value.u.as_double, &bits, sizeof(bits));
        build_spec_text(spec_text, sizeof(spec_text), spec, "", conversion);
        return output_format(out, spec_text, &value);
    }
    switch (conversion) {
    case 'c':
        value.kind = VALUE_INT;
        value.u.as_int = (int)(int32_t)(uint32_t)arguments_read(arguments, *value_offset, 4);
        build_spec_text(spec_text, sizeof(spec_text), spec, "", 'c');
        return output_format(out, spec_text, &value);
    case 'p':
        value.kind = VALUE_POINTER;
        value.u.as_pointer = (void *)(uintptr_t)arguments_read(arguments, *value_offset, 8);
        build_spec_text(spec_text, sizeof(spec_text), spec, "", 'p');
        return output_format(out, spec_text, &value);
    case 's': {
        uint64_t address = arguments_read(arguments, *value_offset, 8);
        char *text = NULL;
        if (read_device_string(read_string, context, address, spec, &text) != 0)
            return -1;
        value.kind = VALUE_STRING;
        value.u.as_string = text != NULL ? text : null_string_text;
        char invalid[64];
        printf_spec shown = *spec;
        if (text == NULL && address != 0 && read_string != NULL) {
            /* a wild pointer: say so in the output, whole (no precision) */
            snprintf(invalid, sizeof(invalid), "(invalid %%s pointer 0x%llx)", (unsigned long long)address);
            value.u.as_string = invalid;
            shown.precision_given = false;
            note_problem(problem, "%%s argument %d is 0x%llx, not a readable device address; printed \"%s\"",
                         arguments->taken, (unsigned long long)address, invalid); /* its value slot is the last taken */
        }
        build_spec_text(spec_text, sizeof(spec_text), &shown, "", 's');
        int status = output_format(out, spec_text, &value);
        free(text);
        return status;
    }
    default:
        return -1; /* callers only pass known conversions */
    }
}

int vm_printf_format(const char *fmt, const uint8_t *args, size_t args_size,
                     vm_printf_read_string read_string, void *ctx,
                     char **out, size_t *out_len, size_t *out_cap)
{
    return vm_printf_format_checked(fmt, args, args_size, read_string, ctx, out, out_len, out_cap, NULL, 0);
}

int vm_printf_format_checked(const char *fmt, const uint8_t *args, size_t args_size,
                             vm_printf_read_string read_string, void *ctx,
                             char **out, size_t *out_len, size_t *out_cap,
                             char *problem_text, size_t problem_cap)
{
    printf_problem problem = { problem_text, problem_cap };
    if (problem_text != NULL && problem_cap > 0)
        problem_text[0] = '\0';
    if (fmt == NULL)
        return VM_PRINTF_NULL_FORMAT;
    if (out == NULL || out_len == NULL || out_cap == NULL)
        return VM_PRINTF_INTERNAL_ERROR;
    if (*out == NULL) {
        *out_len = 0;
        *out_cap = 0;
    }

    printf_output output = { out, out_len, out_cap };
    printf_arguments arguments = { args, args == NULL ? 0 : args_size, 0, 0, false };
    if (output_reserve(&output, 0) != 0)
        return VM_PRINTF_INTERNAL_ERROR;
    (*out)[*out_len] = '\0';

    const char *cursor = fmt;
    while (*cursor != '\0') {
        const char *percent = strchr(cursor, '%');
        if (percent == NULL)
            percent = cursor + strlen(cursor);
        if (percent > cursor) {
            if (output_append(&output, cursor, (size_t)(percent - cursor)) != 0)
                return VM_PRINTF_INTERNAL_ERROR;
            cursor = percent;
            continue;
        }

        printf_spec spec;
        const char *spec_start = cursor;
        cursor = parse_spec(cursor + 1, &spec);
        size_t spec_length = (size_t)(cursor - spec_start);

        if (spec.conversion == '%') {
            if (output_append(&output, "%", 1) != 0)
                return VM_PRINTF_INTERNAL_ERROR;
            continue;
        }
        int value_size = value_slot_size(&spec);
        if (value_size < 0) {
            /* Unknown conversion or format ended inside the specifier. */
            char written[48];
            spec_as_written(written, sizeof(written), spec_start, spec_length);
            if (spec.conversion == '\0')
                note_problem(&problem, "the format ends inside the conversion '%s'; printed as written", written);
            else
                note_problem(&problem, "unknown conversion '%s'; printed as written", written);
            if (output_append(&output, spec_start, spec_length) != 0)
                return VM_PRINTF_INTERNAL_ERROR;
            continue;
        }

        int slot_sizes[3];
        size_t offsets[3];
        int slot_count = 0;
        if (spec.width_from_argument)
            slot_sizes[slot_count++] = 4;
        if (spec.precision_from_argument)
            slot_sizes[slot_count++] = 4;
        slot_sizes[slot_count++] = value_size;
        bool past_limit = !arguments.exhausted && arguments.taken + slot_count > VM_PRINTF_MAX_ARGS;
        if (!arguments_reserve(&arguments, slot_sizes, slot_count, offsets)
            || spec.conversion == 'n') {
            char written[48];
            spec_as_written(written, sizeof(written), spec_start, spec_length);
            if (spec.conversion == 'n')
                note_problem(&problem, "'%s' writes nothing on the device; printed as written", written);
            else if (past_limit)
                note_problem(&problem, "'%s' is past the %d arguments printf takes; printed as written", written,
                             VM_PRINTF_MAX_ARGS);
            else
                note_problem(&problem, "the arguments (%zu bytes) end before '%s'; printed as written",
                             arguments.size, written);
            if (output_append(&output, spec_start, spec_length) != 0)
                return VM_PRINTF_INTERNAL_ERROR;
            continue;
        }

        int slot = 0;
        if (spec.width_from_argument)
            apply_width_argument(&spec, (int32_t)(uint32_t)arguments_read(&arguments, offsets[slot++], 4));
        if (spec.precision_from_argument)
            apply_precision_argument(&spec, (int32_t)(uint32_t)arguments_read(&arguments, offsets[slot++], 4));
        if (format_spec(&output, &arguments, &spec, &offsets[slot], read_string, ctx, &problem) != 0)
            return VM_PRINTF_INTERNAL_ERROR;
    }
    return arguments.taken;
}
