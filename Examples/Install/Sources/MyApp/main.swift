print("MyApp")
