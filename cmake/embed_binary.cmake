# cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=name -P embed_binary.cmake: the file's bytes as
#   extern "C" const unsigned char name[]; extern "C" const unsigned long long name_size;
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," array "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" array "${array}")
file(WRITE ${OUTPUT}.new "// Generated from ${INPUT} by cmake/embed_binary.cmake.\n"
     "extern \"C\" {\nextern const unsigned char ${SYMBOL}[];\nextern const unsigned long long ${SYMBOL}_size;\n"
     "alignas(64) const unsigned char ${SYMBOL}[] = {\n${array}};\n"
     "const unsigned long long ${SYMBOL}_size = ${bytes};\n}\n")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
