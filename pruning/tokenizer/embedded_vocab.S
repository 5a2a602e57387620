/* The vocabularies, embedded in the binary as they are vendored in
   data/tokenizer/ (see data/tokenizer/README.md). pruning/CMakeLists.txt
   passes the project root to the assembler (-Wa,-I) and makes this object
   depend on the files, so a changed vocabulary rebuilds it. Parsed lazily,
   on first use (vocab.cpp). */
    .section .rodata.td_tok_vocab,"a",@progbits

    .globl td_tok_o200k_base_begin
    .globl td_tok_o200k_base_end
    .balign 16
td_tok_o200k_base_begin:
    .incbin "data/tokenizer/o200k_base.tiktoken"
td_tok_o200k_base_end:

    .globl td_tok_cl100k_base_begin
    .globl td_tok_cl100k_base_end
    .balign 16
td_tok_cl100k_base_begin:
    .incbin "data/tokenizer/cl100k_base.tiktoken"
td_tok_cl100k_base_end:

    .section .note.GNU-stack,"",@progbits
