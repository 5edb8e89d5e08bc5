#ifndef DAVGATE_CLIBXML2_SHIM_H
#define DAVGATE_CLIBXML2_SHIM_H
/* Debian's libxml2 is built with ICU; its headers would pull the system ICU
   into every Swift module that imports DAVXML, where they clash with the ICU
   copy inside Foundation ('UErrorCode' has different definitions). Only two
   trailing pointer fields of xmlCharEncodingHandler depend on it, a struct
   Swift never allocates or copies, so hide ICU from the declarations. */
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#endif
