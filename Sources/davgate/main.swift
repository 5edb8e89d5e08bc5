print("davgate")
