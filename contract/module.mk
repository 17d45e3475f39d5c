# contract/: contract.json, its loader, linked into the runner and the C tests.
CONTRACT_OBJS := $(OBJ)/contract/contract.o
